/**
 * The choice every restart offers: all nodes of a service at once, or rolling, in batches of at most N nodes of each
 * service (`rolling: {maxUnavailable: N}`; docs/catalog.md, Rolling restarts).
 */
import { confirmDialog } from "./dialog.js";
import { h } from "./dom.js";
import { field } from "./form.js";

export interface RollingChoice {
  element: HTMLElement;
  /** `{rolling: {maxUnavailable}}` when rolling is chosen, else `{}`; undefined (with the error shown) when N is not a whole number above 0. */
  value(): { rolling?: { maxUnavailable: number } } | undefined;
}

export function rollingChoice(): RollingChoice {
  const rolling = field({ name: "rolling", label: "Rolling restart: a batch at a time", type: "checkbox", value: "false" });
  const maxUnavailable = field({
    name: "maxUnavailable",
    label: "At most this many nodes of each service down at once",
    type: "number",
    value: "1",
    hint: "Never fewer than the service's quantities.min keep running.",
  });
  const sync = () => {
    const on = rolling.value() === "true";
    maxUnavailable.input.disabled = !on;
    maxUnavailable.element.hidden = !on;
  };
  rolling.input.addEventListener("change", sync);
  sync();
  return {
    element: h("div", { class: "rolling-choice" }, rolling.element, maxUnavailable.element),
    value() {
      if (rolling.value() !== "true") return {};
      const n = Number(maxUnavailable.value());
      if (!Number.isInteger(n) || n < 1) {
        maxUnavailable.showError("a whole number of nodes, 1 or more");
        return undefined;
      }
      maxUnavailable.showError(undefined);
      return { rolling: { maxUnavailable: n } };
    },
  };
}

export interface RestartChoice {
  element: HTMLElement;
  /** `{restart}`, with `rolling` when chosen; undefined (with the error shown) when the batch size is not valid. */
  value(): { restart: boolean; rolling?: { maxUnavailable: number } } | undefined;
}

/** A restart checkbox (`label`) with the rolling choice shown while it is checked. */
export function restartChoice(label: string, checked: boolean): RestartChoice {
  const restart = field({ name: "restart", label, type: "checkbox", value: String(checked) });
  const rolling = rollingChoice();
  const options = h("div", { class: "restart-options" }, rolling.element);
  const sync = () => void (options.hidden = restart.value() !== "true");
  restart.input.addEventListener("change", sync);
  sync();
  return {
    element: h("div", { class: "restart-choice" }, restart.element, options),
    value() {
      if (restart.value() !== "true") return { restart: false };
      const batches = rolling.value();
      return batches && { restart: true, ...batches };
    },
  };
}

/** Asks how to restart before the dry run; undefined when the user cancels. */
export async function askRestartMode(title: string): Promise<{ rolling?: { maxUnavailable: number } } | undefined> {
  const choice = rollingChoice();
  for (;;) {
    const go = await confirmDialog({ title, body: h("div", null, h("p", null, "How should the nodes restart?"), choice.element), confirmLabel: "Preview" });
    if (!go) return undefined;
    const value = choice.value();
    if (value) return value;
  }
}
