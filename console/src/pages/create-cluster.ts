import { h } from "../components/dom.js";
import type { MountedPage, PageContext } from "../router.js";

export function createClusterPage(_ctx: PageContext): MountedPage {
  return { element: h("section", null, h("h1", null, "New cluster")) };
}
