/**
 * The cluster's nodes: a virtual table (10,000 rows stay smooth) and, for the node picked, its properties,
 * services and action history with the output of failed actions.
 */
import type { Json, NodeActionView, NodeView } from "@corral/contracts";
import { formatTime, h, replaceChildren } from "../../components/dom.js";
import { virtualTable } from "../../components/virtual-table.js";

const text = (value: Json | undefined) => (value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value));

/** Addresses a provider reports: `ipaddresses` ({access: "1.2.3.4"}) or `ipaddress`. */
function addresses(node: NodeView): string {
  const ips = node.properties["ipaddresses"];
  if (ips && typeof ips === "object" && !Array.isArray(ips)) return Object.entries(ips).map(([k, v]) => `${k} ${text(v)}`).join(", ");
  return text(node.properties["ipaddress"]);
}

function lastAction(node: NodeView): NodeActionView | undefined {
  return node.actions[node.actions.length - 1];
}

function actionRow(a: NodeActionView): HTMLElement[] {
  const row = h(
    "tr",
    { class: a.status === "failed" ? "failed" : undefined },
    h("td", null, formatTime(a.statusTime)),
    h("td", null, a.action),
    h("td", null, a.service || "—"),
    h("td", null, h("span", { class: `badge state-${a.status}` }, a.status)),
  );
  if (a.status !== "failed" || (!a.stdout && !a.stderr)) return [row];
  const output = h(
    "tr",
    { class: "action-output" },
    h(
      "td",
      { colSpan: 4 },
      a.stdout ? h("div", null, h("strong", null, "stdout"), h("pre", { class: "output" }, a.stdout)) : null,
      a.stderr ? h("div", null, h("strong", null, "stderr"), h("pre", { class: "output" }, a.stderr)) : null,
    ),
  );
  return [row, output];
}

function nodeDetail(node: NodeView): HTMLElement {
  return h(
    "section",
    { class: "card node-detail", "aria-label": `Node ${node.id}`, dataset: { node: node.id } },
    h("h3", null, `Node ${text(node.properties["hostname"]) || node.id}`),
    h("dl", { class: "facts" }, h("dt", null, "Id"), h("dd", null, node.id), h("dt", null, "Services"), h("dd", null, node.services.join(", ") || "none"),
      ...Object.entries(node.properties).flatMap(([k, v]) => [h("dt", null, k), h("dd", null, text(v))])),
    h("h4", null, "Action history"),
    node.actions.length === 0
      ? h("p", { class: "muted" }, "No actions yet.")
      : h(
          "table",
          { class: "actions-table" },
          h("thead", null, h("tr", null, h("th", null, "When"), h("th", null, "Action"), h("th", null, "Service"), h("th", null, "Result"))),
          h("tbody", null, ...node.actions.flatMap(actionRow)),
        ),
  );
}

export interface NodesTab {
  element: HTMLElement;
  update(nodes: readonly NodeView[]): void;
}

export function nodesTab(): NodesTab {
  let nodes: readonly NodeView[] = [];
  let picked: string | undefined;
  const detail = h("div");
  const showDetail = () => {
    const node = nodes.find((n) => n.id === picked);
    replaceChildren(detail, node ? nodeDetail(node) : null);
  };
  const table = virtualTable<NodeView>({
    label: "Nodes",
    empty: "No nodes yet",
    key: (n) => n.id,
    columns: [
      { title: "Host", cell: (n) => h("button", { type: "button", class: "link", onclick: () => ((picked = n.id), showDetail(), detail.scrollIntoView?.({ block: "nearest" })) }, text(n.properties["hostname"]) || n.id) },
      { title: "Services", cell: (n) => n.services.join(", ") },
      { title: "Addresses", hideWhenNarrow: true, cell: (n) => addresses(n) },
      {
        title: "Last action",
        cell: (n) => {
          const a = lastAction(n);
          return a ? h("span", null, h("span", { class: `badge state-${a.status}` }, a.status), ` ${a.action} ${a.service}`) : "—";
        },
      },
    ],
  });
  const search = h("input", { type: "search", placeholder: "Filter by host, service or address", "aria-label": "Filter nodes" });
  const redraw = () => {
    const q = search.value.trim().toLowerCase();
    table.update(q ? nodes.filter((n) => `${text(n.properties["hostname"])} ${n.id} ${n.services.join(" ")} ${addresses(n)}`.toLowerCase().includes(q)) : nodes);
  };
  search.addEventListener("input", redraw);
  return {
    element: h("div", { class: "nodes-tab" }, h("div", { class: "toolbar" }, search), table.element, detail),
    update(next) {
      nodes = next;
      redraw();
      if (picked) showDetail();
    },
  };
}
