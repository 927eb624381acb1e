/**
 * The cluster's nodes: a virtual table (10,000 rows stay smooth) with each node's health and its Remove and Replace
 * operations, a form to add nodes, and, for the node picked, its health, properties, services and action history
 * with the output of failed actions. Every operation dry-runs first (components/operation.ts).
 */
import type { ClusterDetails, Json, NodeActionView, NodeView } from "@corral/contracts";
import type { Api } from "../../api.js";
import { formatTime, h, replaceChildren } from "../../components/dom.js";
import { field } from "../../components/form.js";
import { healthBadge } from "../../components/health-badge.js";
import { runOperation } from "../../components/operation.js";
import { restartChoice } from "../../components/rolling-restart.js";
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

const hostOf = (node: NodeView) => text(node.properties["hostname"]) || node.id;

function healthFacts(node: NodeView): HTMLElement[] {
  const health = node.health;
  if (!health) return [h("dt", null, "Health"), h("dd", null, healthBadge(undefined), " never checked")];
  return [
    h("dt", null, "Health"),
    h("dd", { "data-testid": "node-health" }, healthBadge(health), ` ${health.message}`),
    h("dt", null, "Since"),
    h("dd", null, formatTime(health.since)),
    h("dt", null, "Checked"),
    h("dd", null, formatTime(health.checkedAt)),
  ];
}

function nodeDetail(node: NodeView): HTMLElement {
  return h(
    "section",
    { class: "card node-detail", "aria-label": `Node ${node.id}`, dataset: { node: node.id } },
    h("h3", null, `Node ${hostOf(node)}`),
    h("dl", { class: "facts" }, h("dt", null, "Id"), h("dd", null, node.id), ...healthFacts(node), h("dt", null, "Services"), h("dd", null, node.services.join(", ") || "none"),
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
  update(cluster: ClusterDetails): void;
  /** Shows the add-nodes form, open. */
  openAddNodes(): void;
}

/** `changed` is called after an operation started (the page reads the cluster again). */
export function nodesTab(api: Api, changed: () => void): NodesTab {
  let cluster: ClusterDetails | undefined;
  let nodes: readonly NodeView[] = [];
  let picked: string | undefined;
  const detail = h("div");
  const showDetail = () => {
    const node = nodes.find((n) => n.id === picked);
    replaceChildren(detail, node ? nodeDetail(node) : null);
  };
  const live = () => cluster !== undefined && cluster.status !== "terminated";
  const operate = async (run: (c: ClusterDetails) => Promise<{ done: boolean }>) => {
    if (cluster && (await run(cluster)).done) changed();
  };
  const removeNode = (node: NodeView) =>
    operate((c) =>
      runOperation(api, { title: `Remove node ${hostOf(node)}`, endpoint: "clusters.removeNode", params: { id: c.id, nodeId: node.id }, destructive: true, providerType: c.provider.providertype }),
    );
  const replaceNode = (node: NodeView) =>
    operate((c) =>
      runOperation(api, { title: `Replace node ${hostOf(node)}`, endpoint: "clusters.replaceNode", params: { id: c.id, nodeId: node.id }, destructive: true, providerType: c.provider.providertype }),
    );
  const nodeButton = (label: string, node: NodeView, run: (n: NodeView) => void) =>
    h("button", { type: "button", disabled: !live(), "aria-label": `${label} ${hostOf(node)}`, onclick: () => run(node) }, label);
  const table = virtualTable<NodeView>({
    label: "Nodes",
    empty: "No nodes yet",
    key: (n) => n.id,
    columns: [
      { title: "Host", cell: (n) => h("button", { type: "button", class: "link", onclick: () => ((picked = n.id), showDetail(), detail.scrollIntoView?.({ block: "nearest" })) }, hostOf(n)) },
      { title: "Health", width: "8rem", cell: (n) => healthBadge(n.health) },
      { title: "Services", cell: (n) => n.services.join(", ") },
      { title: "Addresses", hideWhenNarrow: true, cell: (n) => addresses(n) },
      {
        title: "Last action",
        hideWhenNarrow: true,
        cell: (n) => {
          const a = lastAction(n);
          return a ? h("span", null, h("span", { class: `badge state-${a.status}` }, a.status), ` ${a.action} ${a.service}`) : "—";
        },
      },
      { title: "Operations", width: "11rem", cell: (n) => h("span", { class: "row-actions" }, nodeButton("Remove", n, removeNode), nodeButton("Replace", n, replaceNode)) },
    ],
  });
  const search = h("input", { type: "search", placeholder: "Filter by host, service, address or health", "aria-label": "Filter nodes" });
  const redraw = () => {
    const q = search.value.trim().toLowerCase();
    const haystack = (n: NodeView) => `${text(n.properties["hostname"])} ${n.id} ${n.services.join(" ")} ${addresses(n)} ${n.health?.state ?? "unchecked"}`.toLowerCase();
    table.update(q ? nodes.filter((n) => haystack(n).includes(q)) : nodes);
  };
  search.addEventListener("input", redraw);
  const addForm = addNodesForm(api, () => cluster, changed);
  return {
    element: h("div", { class: "nodes-tab" }, h("div", { class: "toolbar" }, search), addForm, table.element, detail),
    update(next) {
      cluster = next;
      nodes = next.nodes;
      addForm.hidden = !live();
      redraw(); // every update draws the rows again, their buttons enabled by the status just read
      if (picked) showDetail();
    },
    openAddNodes() {
      addForm.hidden = false;
      addForm.open = true;
      addForm.querySelector("input")?.focus();
    },
  };
}

/** Add nodes: how many, their services (else the solver's choice), and the restart of what their config changes. */
function addNodesForm(api: Api, current: () => ClusterDetails | undefined, changed: () => void): HTMLDetailsElement {
  const count = field({ name: "numMachines", label: "Nodes to add", type: "number", value: "1", required: true });
  const services = field({ name: "services", label: "Services of the new nodes", hint: "Comma separated; empty: the solver chooses so that the cluster keeps every template constraint." });
  const restart = restartChoice("Restart the services whose config the new nodes change", false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const cluster = current();
    if (!cluster) return;
    const numMachines = Number(count.value());
    if (!Number.isInteger(numMachines) || numMachines < 1) return count.showError("a whole number of nodes, 1 or more");
    count.showError(undefined);
    const wanted = services.value().split(",").map((s) => s.trim()).filter(Boolean);
    const restarting = restart.value();
    if (!restarting) return;
    const body = { numMachines, ...(wanted.length > 0 ? { services: wanted } : {}), ...restarting };
    const title = `Add ${numMachines} ${numMachines === 1 ? "node" : "nodes"}`;
    const outcome = await runOperation(api, { title, endpoint: "clusters.addNodes", params: { id: cluster.id }, body, providerType: cluster.provider.providertype });
    if (outcome.done) changed();
  };
  return h(
    "details",
    { class: "card add-nodes" },
    h("summary", null, "Add nodes…"),
    h("form", { onsubmit: submit }, count.element, services.element, restart.element, h("button", { type: "submit", class: "primary" }, "Add nodes")),
  );
}
