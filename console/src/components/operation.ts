/**
 * Runs an operation the way every button of the console does: dry run first (`?dryRun=true`), its layout and
 * plan shown in a dialog, the real call only once the user confirms. Provider fields the server asks for are
 * asked of the user (generated form) and sent with both calls.
 */
import type { BodyOf, EndpointName, JsonObject } from "@corral/contracts";
import { ApiError, type Api } from "../api.js";
import { confirmDialog } from "./dialog.js";
import { h } from "./dom.js";
import { dryRunPreview, isDryRunResult } from "./dry-run-preview.js";
import { providerFieldsForm } from "./provider-fields.js";

export interface Operation<N extends EndpointName> {
  /** What the dialog and buttons say: "Stop all services". */
  title: string;
  endpoint: N;
  params: Readonly<Record<string, string>>;
  /** The body without provider fields; they are added when the server asks for them. */
  body?: BodyOf<N> & { providerFields?: JsonObject };
  /** Destroys something (stop, delete): the confirm button is red and Cancel has focus. */
  destructive?: boolean;
  /** Provider type of the cluster, for the provider-fields form. */
  providerType?: string;
}

export type OperationOutcome = { done: true; reply: unknown } | { done: false; reason: "cancelled" } | { done: false; reason: "failed"; error: unknown };

/** Shows the dry run, asks, then calls. Errors of the dry run or the call are shown in a dialog and returned. */
export async function runOperation<N extends EndpointName>(api: Api, op: Operation<N>): Promise<OperationOutcome> {
  let providerFields: JsonObject | undefined;
  for (;;) {
    const body = (providerFields ? { ...(op.body ?? {}), providerFields } : op.body) as BodyOf<N> | undefined;
    const options = { params: op.params, ...(body !== undefined ? { body } : {}) };
    let preview: HTMLElement;
    try {
      const answer = await api.dryRun(op.endpoint, options);
      preview = isDryRunResult(answer) ? dryRunPreview(answer) : h("p", null, "The server describes no layout or plan for this.");
    } catch (err) {
      if (err instanceof ApiError && err.missingFields && op.providerType) {
        const form = await providerFieldsForm(api, op.providerType, err.missingFields);
        const go = await confirmDialog({ title: op.title, body: form.element, confirmLabel: "Continue" });
        if (!go) return { done: false, reason: "cancelled" };
        providerFields = form.values();
        continue;
      }
      await showFailure(op.title, err);
      return { done: false, reason: "failed", error: err };
    }
    const confirmed = await confirmDialog({
      title: op.title,
      body: h("div", null, h("p", null, "Dry run: this is what it would do. Nothing has changed yet."), preview),
      confirmLabel: op.title,
      ...(op.destructive ? { destructive: true } : {}),
    });
    if (!confirmed) return { done: false, reason: "cancelled" };
    try {
      return { done: true, reply: await api.call(op.endpoint, options) };
    } catch (err) {
      await showFailure(op.title, err);
      return { done: false, reason: "failed", error: err };
    }
  }
}

async function showFailure(title: string, err: unknown): Promise<void> {
  const message = err instanceof Error ? err.message : String(err);
  const status = err instanceof ApiError ? ` (HTTP ${err.status})` : "";
  await confirmDialog({ title: `${title}: refused${status}`, body: h("p", { class: "error" }, message), confirmLabel: "OK" });
}
