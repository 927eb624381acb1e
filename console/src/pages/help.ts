/**
 * Help: the project's guides as the gateway serves them at `/docs` (listed by `/docs/index.json`), and the API's
 * own reference. Reachable before signing in; the guides need neither identity nor token.
 */
import { h, replaceChildren } from "../components/dom.js";
import type { MountedPage } from "../router.js";

/** What `/docs/index.json` answers (services/gateway/src/guides/guides.ts). */
interface GuideIndex {
  guides: Array<{ name: string; title: string; path: string }>;
  apiReference: string;
}

/** Where the guides are, outside the API's version segment. */
const GUIDE_INDEX_URL = "/docs/index.json";

export function helpPage(): MountedPage {
  const list = h("div", { class: "card", "aria-live": "polite" }, h("p", { class: "muted" }, "Loading the guides…"));
  const reference = h(
    "div",
    { class: "card" },
    h("h2", null, "API reference"),
    h("p", null, h("a", { href: "/v2/docs" }, "Every endpoint"), " with its parameters and answers (Swagger UI), from the ", h("a", { href: "/v2/openapi.json" }, "OpenAPI description"), "."),
  );
  const controller = new AbortController();
  void loadGuides(controller.signal).then((index) => {
    if (controller.signal.aborted) return;
    if (!index) {
      replaceChildren(list, h("p", null, "The guides are not installed with this Corral; they are the markdown files of the repository's docs/ folder."));
      return;
    }
    const items = index.guides.map((g) => h("li", null, h("a", { href: g.path }, g.title), " ", h("span", { class: "muted" }, `(${g.name}.md)`)));
    replaceChildren(list, h("h2", null, "Guides"), h("ul", { class: "guides" }, ...items));
  });
  return { element: h("section", null, h("h1", null, "Help"), list, reference), dispose: () => controller.abort() };
}

async function loadGuides(signal: AbortSignal): Promise<GuideIndex | undefined> {
  try {
    const res = await fetch(GUIDE_INDEX_URL, { signal });
    if (!res.ok) return undefined;
    const index = (await res.json()) as GuideIndex;
    return Array.isArray(index.guides) && index.guides.length > 0 ? index : undefined;
  } catch {
    return undefined;
  }
}
