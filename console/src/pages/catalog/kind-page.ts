/** `#/catalog/:kind`: the entities of one catalog kind; for services, their dependency graph above the list. */
import type { CatalogEntity, Service } from "@corral/contracts";
import { h, replaceChildren } from "../../components/dom.js";
import { virtualTable } from "../../components/virtual-table.js";
import { catalogEntityPath, CATALOG_PATH, newCatalogEntityPath } from "../../paths.js";
import type { MountedPage, PageContext } from "../../router.js";
import { isTenantAdmin } from "../../session.js";
import { dependencyGraph } from "./dependency-graph.js";
import { isCatalogKind, viewOf } from "./kinds.js";
import { listCatalog } from "./known-names.js";

export function catalogKindPage(ctx: PageContext): MountedPage {
  const kind = ctx.params["kind"] ?? "";
  const element = h("section", { class: "catalog-kind" });
  if (!isCatalogKind(kind)) {
    replaceChildren(element, h("h1", null, "Not found"), h("p", null, `No catalog kind ${kind}. `, h("a", { href: `#${CATALOG_PATH}` }, "Go to the catalog")));
    return { element };
  }
  const view = viewOf(kind);
  const table = virtualTable<CatalogEntity>({
    label: view.plural,
    empty: `No ${view.plural.toLowerCase()}`,
    key: (e) => e.name,
    columns: [
      { title: "Name", width: "14rem", cell: (e) => h("a", { href: `#${catalogEntityPath(kind, e.name)}` }, e.name) },
      { title: "Description", hideWhenNarrow: true, cell: (e) => e.description ?? "" },
      { title: "Summary", cell: (e) => view.summary(e) },
    ],
  });
  const graphSlot = h("div");
  const problem = h("p", { class: "error", role: "alert" });
  replaceChildren(
    element,
    h("p", { class: "crumbs" }, h("a", { href: `#${CATALOG_PATH}` }, "Catalog")),
    h(
      "div",
      { class: "toolbar" },
      h("h1", null, view.plural),
      isTenantAdmin(ctx.session) ? h("a", { href: `#${newCatalogEntityPath(kind)}`, class: "button-link" }, `New ${view.singular}`) : null,
    ),
    problem,
    graphSlot,
    table.element,
  );
  void listCatalog(ctx.api, kind).then(
    (entities) => {
      table.update([...entities].sort((a, b) => a.name.localeCompare(b.name)));
      if (kind === "services") replaceChildren(graphSlot, dependencyGraph(entities as readonly Service[]));
    },
    (err: unknown) => void (problem.textContent = `Could not read the ${view.plural.toLowerCase()}: ${(err as Error).message}`),
  );
  return { element };
}
