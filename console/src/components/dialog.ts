/** A modal confirmation on the native <dialog> (focus is trapped and Escape cancels, by the browser). */
import { h, type Child } from "./dom.js";

export interface ConfirmOptions {
  title: string;
  /** What the user is about to confirm: text, a dry-run preview, a form. */
  body: Child;
  confirmLabel: string;
  /** Styles the confirm button as destructive. */
  destructive?: boolean;
}

/** Resolves true when the user confirms, false when they cancel or press Escape. */
export function confirmDialog(options: ConfirmOptions): Promise<boolean> {
  return new Promise((resolve) => {
    const cancel = h("button", { type: "button", onclick: () => dialog.close("cancel") }, "Cancel");
    const confirm = h(
      "button",
      { type: "button", class: options.destructive ? "danger" : "primary", onclick: () => dialog.close("confirm") },
      options.confirmLabel,
    );
    const dialog = h(
      "dialog",
      { class: "confirm", "aria-labelledby": "confirm-title" },
      h("h2", { id: "confirm-title" }, options.title),
      h("div", { class: "confirm-body" }, options.body),
      h("div", { class: "actions" }, cancel, confirm),
    );
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(dialog.returnValue === "confirm");
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    (options.destructive ? cancel : confirm).focus();
  });
}
