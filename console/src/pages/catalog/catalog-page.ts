/** `#/catalog`: the five catalog kinds with their counts, and export and import of the whole catalog. */
import { CATALOG_KINDS } from "@corral/contracts";
import { h, replaceChildren } from "../../components/dom.js";
import { catalogKindPath } from "../../paths.js";
import type { MountedPage, PageContext } from "../../router.js";
import { viewOf } from "./kinds.js";
import { catalogTransfer } from "./transfer.js";

export function catalogPage(ctx: PageContext): MountedPage {
  const kinds = h("ul", { class: "kinds" });
  const problem = h("p", { class: "error", role: "alert" });
  const count = async () => {
    try {
      const snapshot = await ctx.api.call("tenancy.export");
      replaceChildren(
        kinds,
        ...CATALOG_KINDS.map((kind) =>
          h("li", { class: "card" }, h("a", { href: `#${catalogKindPath(kind)}` }, viewOf(kind).plural), h("span", { class: "count", dataset: { kind } }, String(snapshot[kind].length))),
        ),
      );
      problem.textContent = "";
    } catch (err) {
      problem.textContent = `Could not read the catalog: ${(err as Error).message}`;
    }
  };
  void count();
  const element = h("section", { class: "catalog" }, h("h1", null, "Catalog"), problem, kinds, catalogTransfer(ctx, () => void count()));
  return { element };
}
