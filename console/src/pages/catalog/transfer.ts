/**
 * Export and import of the whole catalog (`GET /export`, `POST /import`): the export fills a text box and a
 * download link; an import takes that box (typed, pasted or read from a file) and, once confirmed, replaces every
 * entity of the tenant's catalog with it.
 */
import { CATALOG_KINDS, type CatalogSnapshot } from "@corral/contracts";
import { ApiError } from "../../api.js";
import { confirmDialog } from "../../components/dialog.js";
import { h } from "../../components/dom.js";
import { clearErrors, field, formMessage, showServerError } from "../../components/form.js";
import type { PageContext } from "../../router.js";
import { isTenantAdmin } from "../../session.js";

const counted = (snapshot: Partial<CatalogSnapshot>) =>
  CATALOG_KINDS.map((kind) => `${snapshot[kind]?.length ?? 0} ${kind}`).join(", ");

function parseSnapshot(text: string): Partial<CatalogSnapshot> {
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Partial<CatalogSnapshot>;
  } catch (err) {
    throw new ApiError(400, "bad_request", `catalog is not valid JSON: ${(err as Error).message}`, { field: "catalog" });
  }
  throw new ApiError(400, "bad_request", "catalog must be an object with providers, hardwaretypes, imagetypes, services and clustertemplates", { field: "catalog" });
}

export function catalogTransfer(ctx: PageContext, onImported: () => void): HTMLElement {
  const text = field({ name: "catalog", label: "Catalog (JSON)", type: "textarea", hint: "The export's shape: {providers, hardwaretypes, imagetypes, services, clustertemplates}." });
  text.input.setAttribute("rows", "14");
  const message = formMessage();
  const status = h("p", { class: "ok", role: "status" });
  const download = h("a", { class: "download", hidden: true }, "Download the export");
  let downloadUrl: string | undefined;

  const exportCatalog = async () => {
    clearErrors([text], message);
    try {
      const json = JSON.stringify(await ctx.api.call("tenancy.export"), null, 2);
      text.input.value = json;
      if (downloadUrl) URL.revokeObjectURL(downloadUrl);
      downloadUrl = URL.createObjectURL(new Blob([json], { type: "application/json" }));
      Object.assign(download, { href: downloadUrl, download: `corral-catalog-${ctx.session.tenant}.json`, hidden: false });
      status.textContent = `Exported ${counted(JSON.parse(json) as CatalogSnapshot)}.`;
    } catch (err) {
      showServerError(err, [text], message);
    }
  };
  const readFile = async (event: Event) => {
    const file = (event.target as HTMLInputElement).files?.[0];
    if (file) text.input.value = await file.text();
  };
  const importCatalog = async () => {
    clearErrors([text], message);
    status.textContent = "";
    try {
      const snapshot = parseSnapshot(text.input.value);
      const sure = await confirmDialog({
        title: "Import the catalog",
        body: h("p", null, `This replaces the whole catalog of tenant ${ctx.session.tenant} with ${counted(snapshot)}. Entities not in it are removed.`),
        confirmLabel: "Replace the catalog",
        destructive: true,
      });
      if (!sure) return;
      await ctx.api.call("tenancy.import", { body: snapshot });
      status.textContent = `Imported ${counted(snapshot)}.`;
      onImported();
    } catch (err) {
      showServerError(err, [text], message);
    }
  };
  const admin = isTenantAdmin(ctx.session);
  return h(
    "section",
    { class: "card transfer", "aria-labelledby": "transfer-title" },
    h("h2", { id: "transfer-title" }, "Export and import"),
    h(
      "div",
      { class: "actions" },
      h("button", { type: "button", onclick: exportCatalog }, "Export"),
      download,
      admin ? h("label", { class: "file" }, "Read a file ", h("input", { type: "file", accept: "application/json,.json", onchange: readFile })) : null,
    ),
    text.element,
    message.element,
    status,
    admin
      ? h("div", { class: "actions" }, h("button", { type: "button", class: "danger", onclick: importCatalog }, "Import"))
      : h("p", { class: "muted" }, "Only the tenant's admin imports."),
  );
}
