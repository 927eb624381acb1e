/** The caller's clusters (all of the tenant's for its admin): status filters and a name search, kept up to date live. */
import { CLUSTER_STATUSES, type ClusterSummary } from "@corral/contracts";
import { formatTime, h } from "../components/dom.js";
import { progressText, statusBadge } from "../components/status-badge.js";
import { virtualTable } from "../components/virtual-table.js";
import { watchClusterList } from "../events.js";
import { clusterPath, HOME_PATH, NEW_CLUSTER_PATH } from "../paths.js";
import type { MountedPage, PageContext } from "../router.js";

/** Status filter in the hash (`#/clusters?status=active,pending`), so a filtered list can be linked. */
function statusesOf(query: URLSearchParams): string[] {
  return (query.get("status") ?? "").split(",").filter((s) => (CLUSTER_STATUSES as readonly string[]).includes(s));
}

export function clusterListPage(ctx: PageContext): MountedPage {
  const statuses = statusesOf(ctx.query);
  let clusters: ClusterSummary[] = [];
  const table = virtualTable<ClusterSummary>({
    label: "Clusters",
    empty: "No clusters",
    key: (c) => c.id,
    columns: [
      { title: "Name", cell: (c) => h("a", { href: `#${clusterPath(c.id)}` }, c.name) },
      { title: "Status", width: "8rem", cell: (c) => statusBadge(c.status) },
      { title: "Progress", hideWhenNarrow: true, cell: (c) => progressText(c.progress) },
      { title: "Nodes", width: "5rem", cell: (c) => c.numNodes },
      { title: "Template", hideWhenNarrow: true, cell: (c) => c.clusterTemplate.name },
      { title: "Created", hideWhenNarrow: true, cell: (c) => formatTime(c.createTime) },
      { title: "Id", width: "6rem", hideWhenNarrow: true, cell: (c) => c.id },
    ],
  });
  const search = h("input", { type: "search", id: "cluster-search", placeholder: "Filter by name", "aria-label": "Filter by name" });
  const problem = h("p", { class: "error", role: "alert" });
  const redraw = () => {
    const text = search.value.trim().toLowerCase();
    table.update(text ? clusters.filter((c) => c.name.toLowerCase().includes(text)) : clusters);
  };
  search.addEventListener("input", redraw);
  const setFilter = (status: string, on: boolean) => {
    const next = on ? [...statuses, status] : statuses.filter((s) => s !== status);
    ctx.navigate(next.length ? `${HOME_PATH}?status=${next.join(",")}` : HOME_PATH);
  };
  const filters = h(
    "fieldset",
    { class: "filters" },
    h("legend", { class: "muted" }, "Status"),
    ...CLUSTER_STATUSES.map((s) =>
      h(
        "label",
        null,
        h("input", { type: "checkbox", name: "status", value: s, checked: statuses.includes(s), onchange: (e: Event) => setFilter(s, (e.target as HTMLInputElement).checked) }),
        ` ${s}`,
      ),
    ),
  );
  const feed = watchClusterList(
    ctx.api,
    statuses,
    (next) => {
      clusters = next;
      problem.textContent = "";
      redraw();
    },
    (err) => void (problem.textContent = `Could not read the clusters: ${err instanceof Error ? err.message : String(err)}`),
  );
  const element = h(
    "section",
    { class: "cluster-list" },
    h("div", { class: "toolbar" }, h("h1", null, "Clusters"), h("a", { href: `#${NEW_CLUSTER_PATH}`, class: "button-link" }, "New cluster")),
    filters,
    h("div", { class: "toolbar" }, search),
    problem,
    table.element,
  );
  return { element, dispose: () => feed.stop() };
}
