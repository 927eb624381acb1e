/**
 * Form fields that show the server's validation error beside the field it names (`details.field`), and a
 * form-level message for everything else.
 */
import { ApiError } from "../api.js";
import { h } from "./dom.js";

export interface FieldOptions {
  name: string;
  label: string;
  type?: "text" | "number" | "password" | "textarea" | "select" | "checkbox";
  value?: string;
  required?: boolean;
  /** For `select`. */
  choices?: readonly string[];
  hint?: string;
  /** Never put back into the page from a server value (sensitive provider fields). */
  sensitive?: boolean;
}

export interface Field {
  element: HTMLElement;
  input: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;
  name: string;
  value(): string;
  showError(message: string | undefined): void;
}

let fieldCount = 0;

export function field(options: FieldOptions): Field {
  const id = `f${++fieldCount}-${options.name.replace(/[^a-zA-Z0-9_-]/g, "_")}`;
  const errorId = `${id}-error`;
  const common = { id, name: options.name, required: options.required ?? false, "aria-describedby": errorId };
  const type = options.sensitive ? "password" : (options.type ?? "text");
  const input =
    type === "textarea"
      ? h("textarea", { ...common, rows: 6, value: options.value ?? "" })
      : type === "select"
        ? h("select", common, ...(options.choices ?? []).map((c) => h("option", { value: c, selected: c === options.value }, c || "(default)")))
        : h("input", {
            ...common,
            type,
            ...(type === "checkbox" ? { checked: options.value === "true" } : { value: options.value ?? "" }),
            ...(options.sensitive ? { autocomplete: "off" } : {}),
          });
  const error = h("span", { id: errorId, class: "field-error", role: "alert" });
  const element = h(
    "div",
    { class: `field field-${type}` },
    h("label", { htmlFor: id }, options.label, options.required ? h("span", { class: "required", "aria-hidden": "true" }, " *") : null),
    input,
    options.hint ? h("small", { class: "hint" }, options.hint) : null,
    error,
  );
  return {
    element,
    input,
    name: options.name,
    value: () => (input instanceof HTMLInputElement && input.type === "checkbox" ? String(input.checked) : input.value),
    showError(message) {
      error.textContent = message ?? "";
      element.classList.toggle("invalid", message !== undefined);
      input.setAttribute("aria-invalid", message !== undefined ? "true" : "false");
    },
  };
}

/** A message area for errors no field owns. */
export function formMessage(): { element: HTMLElement; show(message: string | undefined): void } {
  const element = h("p", { class: "form-message", role: "alert" });
  return { element, show: (message) => void (element.textContent = message ?? "") };
}

/** Clears every field's error and the form's message. */
export function clearErrors(fields: readonly Field[], message: { show(m: string | undefined): void }): void {
  for (const f of fields) f.showError(undefined);
  message.show(undefined);
}

/**
 * The field a server error's path belongs to: the field of that name, else the one whose name is the longest
 * leading part of the path (`defaults.services[2]` belongs to `defaults.services`, or else to `defaults`), else
 * the only field inside it (`provisioner is required` belongs to `provisioner.actions` when that is all it has).
 */
function ownerOf(fields: readonly Field[], path: string): Field | undefined {
  const within = (f: Field) => f.name === path || path.startsWith(`${f.name}.`) || path.startsWith(`${f.name}[`);
  const outer = fields.filter(within).sort((a, b) => b.name.length - a.name.length)[0];
  const inside = fields.filter((f) => f.name.startsWith(`${path}.`));
  return outer ?? (inside.length === 1 ? inside[0] : undefined);
}

/**
 * Shows `err` beside the field it names (matching a field's name, or the longest leading part of its path), or in
 * `message` when no field owns it. Clears earlier errors first.
 */
export function showServerError(err: unknown, fields: readonly Field[], message: { show(m: string | undefined): void }): void {
  clearErrors(fields, message);
  const text = err instanceof Error ? err.message : String(err);
  const named = err instanceof ApiError ? err.field : undefined;
  const owner = named === undefined ? undefined : ownerOf(fields, named);
  if (owner) {
    owner.showError(text);
    owner.input.focus();
    message.show(undefined);
  } else {
    message.show(text);
  }
}
