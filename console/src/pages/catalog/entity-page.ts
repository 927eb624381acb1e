/**
 * One catalog entity: its form (create or edit), saved with the server's validation errors beside the field they
 * name, and deleted after a confirmation. The tenant's admin edits; everyone else reads the same form disabled.
 */
import type { CatalogKind, JsonObject } from "@corral/contracts";
import type { Api } from "../../api.js";
import { confirmDialog } from "../../components/dialog.js";
import { h, replaceChildren } from "../../components/dom.js";
import { clearErrors, formMessage, showServerError } from "../../components/form.js";
import { catalogEntityPath, catalogKindPath, CATALOG_PATH } from "../../paths.js";
import type { MountedPage, PageContext } from "../../router.js";
import { isTenantAdmin } from "../../session.js";
import { entityForm } from "./entity-form.js";
import { isCatalogKind, viewOf } from "./kinds.js";
import { knownNames } from "./known-names.js";

const endpoint = <Op extends "get" | "create" | "update" | "delete">(kind: CatalogKind, op: Op) => `tenancy.catalog.${kind}.${op}` as const;

const getEntity = (api: Api, kind: CatalogKind, name: string) => api.call(endpoint(kind, "get"), { params: { name } });

/** `#/catalog/:kind/:name`: edit (or read) one entity. */
export function catalogEntityPage(ctx: PageContext): MountedPage {
  return editor(ctx, ctx.params["kind"] ?? "", ctx.params["name"]);
}

/** `#/catalog/new/:kind`: create one. */
export function newCatalogEntityPage(ctx: PageContext): MountedPage {
  return editor(ctx, ctx.params["kind"] ?? "", undefined);
}

function editor(ctx: PageContext, kind: string, name: string | undefined): MountedPage {
  const element = h("section", { class: "catalog-entity" });
  if (!isCatalogKind(kind)) {
    replaceChildren(element, h("h1", null, "Not found"), h("p", null, `No catalog kind ${kind}. `, h("a", { href: `#${CATALOG_PATH}` }, "Go to the catalog")));
    return { element };
  }
  const view = viewOf(kind);
  const title = name === undefined ? `New ${view.singular}` : `${view.singular[0]?.toUpperCase()}${view.singular.slice(1)} ${name}`;
  const crumbs = h("p", { class: "crumbs" }, h("a", { href: `#${CATALOG_PATH}` }, "Catalog"), " / ", h("a", { href: `#${catalogKindPath(kind)}` }, view.plural));
  replaceChildren(element, crumbs, h("h1", null, title), h("p", { class: "muted" }, "Loading…"));
  const canEdit = isTenantAdmin(ctx.session);

  const draw = (entity: JsonObject | undefined, known: Awaited<ReturnType<typeof knownNames>>, saved = false) => {
    const form = entityForm(view.fields, entity, known);
    const message = formMessage();
    const [nameField] = form.fields;
    if (nameField && name !== undefined) (nameField.input as HTMLInputElement).readOnly = true;
    if (!canEdit) for (const f of form.fields) f.input.disabled = true;

    const save = async (event: Event) => {
      event.preventDefault();
      try {
        const body = form.read();
        if (name === undefined) {
          await ctx.api.call(endpoint(kind, "create"), { body });
          ctx.navigate(catalogEntityPath(kind, String(body["name"] ?? "")));
          return;
        }
        const stored = await ctx.api.call(endpoint(kind, "update"), { params: { name }, body });
        draw(stored as unknown as JsonObject, known, true);
      } catch (err) {
        showServerError(err, form.fields, message);
      }
    };
    const remove = async () => {
      if (name === undefined) return;
      const sure = await confirmDialog({ title: `Delete ${view.singular} ${name}`, body: h("p", null, "It is removed from the catalog; clusters made with it keep running."), confirmLabel: "Delete", destructive: true });
      if (!sure) return;
      try {
        clearErrors(form.fields, message);
        await ctx.api.call(endpoint(kind, "delete"), { params: { name } });
        ctx.navigate(catalogKindPath(kind));
      } catch (err) {
        showServerError(err, form.fields, message);
      }
    };
    const buttons = canEdit
      ? h(
          "div",
          { class: "actions" },
          h("button", { type: "submit", class: "primary" }, name === undefined ? `Create ${view.singular}` : "Save"),
          name !== undefined ? h("button", { type: "button", class: "danger", onclick: remove }, "Delete") : null,
        )
      : h("p", { class: "muted" }, "Only the tenant's admin changes the catalog.");
    const formElement = h("form", { class: "card entity-form", onsubmit: save, novalidate: true, "aria-label": title }, ...form.fields.map((f) => f.element), message.element, h("p", { class: "ok", role: "status" }, saved ? "Saved." : ""), buttons);
    replaceChildren(element, crumbs, h("h1", null, title), formElement);
  };

  void (async () => {
    try {
      const [entity, known] = await Promise.all([name === undefined ? undefined : getEntity(ctx.api, kind, name), knownNames(ctx.api, view.fields)]);
      draw(entity as unknown as JsonObject | undefined, known);
    } catch (err) {
      replaceChildren(element, crumbs, h("h1", null, title), h("p", { class: "error", role: "alert" }, `Could not read it: ${(err as Error).message}`));
    }
  })();
  return { element };
}
