/** How clusters, their nodes and plans look as tables. */
import type { ClusterDetails, ClusterSummary, DryRunNode, DryRunResult, NodeView, PlanView } from "@corral/contracts";
import type { PlanProgress } from "../progress/plan-progress.js";
import { formatDuration } from "../progress/progress-text.js";
import { healthState, healthSummary } from "./node-health.js";
import { cell, isPlainObject, renderFields, renderTable, type Column } from "./table.js";

/** ms since the epoch as ISO time to the second (UTC); 0 means never. */
export const formatTime = (ms: number): string => (ms === 0 ? "never" : new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z"));

const progressText = (c: Pick<ClusterSummary, "progress">) =>
  `${c.progress.action} ${c.progress.actionstatus} ${c.progress.stepscompleted}/${c.progress.stepstotal}`;

/** `corral status`: one line per cluster; with `health`, a HEALTH column (the cluster's nodes counted by state). */
export function clusterTable<C extends ClusterSummary>(clusters: readonly C[], health?: (c: C) => string): string {
  if (clusters.length === 0) return "no clusters";
  const columns: Column<C>[] = [
    { header: "ID", value: (c) => c.id },
    { header: "NAME", value: (c) => c.name },
    { header: "TEMPLATE", value: (c) => c.clusterTemplate.name },
    { header: "STATUS", value: (c) => c.status },
    { header: "NODES", value: (c) => String(c.numNodes) },
    ...(health ? [{ header: "HEALTH", value: health }] : []),
    { header: "PROGRESS", value: progressText },
    { header: "OWNER", value: (c) => c.ownerId },
    { header: "EXPIRES", value: (c) => formatTime(c.expireTime) },
  ];
  return renderTable(columns, clusters);
}

/** A cluster's nodes; a MESSAGE column (last) says why when a node is not healthy. */
export function nodeTable(nodes: readonly NodeView[]): string {
  if (nodes.length === 0) return "no nodes";
  const troubled = nodes.some((n) => n.health !== undefined && n.health.state !== "healthy");
  return renderTable<NodeView>(
    [
      { header: "NODE", value: (n) => n.id },
      { header: "HOSTNAME", value: (n) => cell(n.properties["hostname"]) },
      { header: "IP", value: (n) => addresses(n.properties["ipaddresses"] ?? n.properties["ipaddress"]) },
      { header: "SERVICES", value: (n) => n.services.join(",") },
      { header: "HEALTH", value: healthState },
      { header: "SINCE", value: (n) => (n.health ? formatTime(n.health.since) : "") },
      { header: "LAST ACTION", value: (n) => lastAction(n) },
      ...(troubled ? [{ header: "MESSAGE", value: (n: NodeView) => (n.health && n.health.state !== "healthy" ? n.health.message : "") }] : []),
    ],
    nodes,
  );
}

/** `{access_v4: a, bind_v4: b}` -> `access_v4=a,bind_v4=b`. */
function addresses(value: unknown): string {
  return isPlainObject(value) ? Object.entries(value).map(([k, v]) => `${k}=${cell(v)}`).join(",") : cell(value);
}

function lastAction(node: NodeView): string {
  const last = node.actions.at(-1);
  return last ? `${last.action}${last.service ? ` ${last.service}` : ""} ${last.status}` : "";
}

export function clusterDetailsView(c: ClusterDetails): string {
  const fields = renderFields([
    ["id", c.id],
    ["name", c.name],
    ["description", c.description],
    ["status", c.status],
    ["progress", progressText(c)],
    ["template", c.clusterTemplate.name],
    ["provider", `${c.provider.name} (${c.provider.providertype})`],
    ["services", c.services.join(", ")],
    ["health", healthSummary(c.nodes)],
    ["owner", c.ownerId],
    ["created", formatTime(c.createTime)],
    ["expires", formatTime(c.expireTime)],
  ]);
  return `${fields}\n\n${nodeTable(c.nodes)}`;
}

/** `corral plan`: the plan's stages, each task with its state, attempts and duration. */
export function planProgressView(p: PlanProgress): string {
  const header = `plan ${p.planId} of cluster ${p.clusterId}: ${p.action} ${p.status}, ${p.done}/${p.total} tasks, created ${formatTime(p.createTime)}`;
  const rows = p.stages.flatMap((stage) => stage.tasks.map((task) => ({ stage: stage.index, task })));
  const table = renderTable(
    [
      { header: "STAGE", value: (r: (typeof rows)[number]) => `${r.stage + 1}/${p.stages.length}` },
      { header: "TASK", value: (r) => r.task.taskName },
      { header: "SERVICE", value: (r) => r.task.service ?? "" },
      { header: "NODE", value: (r) => r.task.nodeId },
      { header: "STATE", value: (r) => r.task.state },
      { header: "ATTEMPTS", value: (r) => String(r.task.attempts) },
      { header: "DURATION", value: (r) => (r.task.durationMs !== undefined ? formatDuration(r.task.durationMs) : "") },
    ],
    rows,
  );
  return `${header}\n${table}`;
}

/** A plan without task states (the plan endpoints' own answer). */
export function planView(plan: PlanView): string {
  const lines = [`plan ${plan.id}: ${plan.action} ${plan.status}, stage ${plan.currentStage + 1}/${plan.stages.length}`];
  plan.stages.forEach((stage, i) => {
    lines.push(`stage ${i + 1}:`);
    for (const t of stage) lines.push(`  ${t.taskName}${t.service ? ` ${t.service}` : ""} on ${t.nodeId}`);
  });
  return lines.join("\n");
}

/** A dry run's answer (like `terraform plan`): the nodes of the layout, then the plan's stages. */
export function dryRunView(result: DryRunResult): string {
  const nodes = renderTable<DryRunNode>([...DRY_RUN_NODE_COLUMNS], result.layout.nodes);
  return [
    `dry run for cluster ${result.clusterId}: nothing was changed`,
    `layout: ${result.layout.nodes.length} nodes, services ${result.layout.services.join(", ")}`,
    nodes,
    "",
    ...planLines(result),
  ].join("\n");
}

const DRY_RUN_NODE_COLUMNS: readonly Column<DryRunNode>[] = [
  { header: "NODE", value: (n) => n.id },
  { header: "HOSTNAME", value: (n) => n.hostname },
  { header: "HARDWARE", value: (n) => n.hardwaretype },
  { header: "IMAGE", value: (n) => n.imagetype },
  { header: "SERVICES", value: (n) => n.services.join(",") },
];

function planLines(result: DryRunResult): string[] {
  const stages = result.plan.stages.map((stage, i) => `stage ${i + 1}: ${stage.map((t) => `${t.taskName}${t.service ? ` ${t.service}` : ""} on ${t.nodeId}`).join(", ")}`);
  const tasks = result.plan.stages.reduce((n, stage) => n + stage.length, 0);
  return [`plan ${result.plan.action}: ${result.plan.stages.length} stages, ${tasks} tasks`, ...stages];
}

/** `+` a node the request adds, `-` one it removes, `~` one whose services it changes. */
type Change = "+" | "-" | "~";

/**
 * A dry run of a change to a live cluster's nodes (add, remove, replace): only the nodes that change, each marked,
 * with the count of those that stay as they are, then the plan's stages.
 */
export function layoutChangeView(before: readonly NodeView[], result: DryRunResult): string {
  const after = new Map(result.layout.nodes.map((n) => [n.id, n]));
  const rows: Array<{ change: Change; node: DryRunNode }> = [];
  for (const old of before) {
    const now = after.get(old.id);
    if (!now) rows.push({ change: "-", node: dryRunNodeOf(old) });
    else if ([...old.services].sort().join(",") !== now.services.join(",")) rows.push({ change: "~", node: now });
  }
  const known = new Set(before.map((n) => n.id));
  for (const node of result.layout.nodes) if (!known.has(node.id)) rows.push({ change: "+", node });
  const count = (c: Change) => rows.filter((r) => r.change === c).length;
  const unchanged = result.layout.nodes.length - count("+") - count("~");
  const summary = `layout: ${before.length} -> ${result.layout.nodes.length} nodes (${count("+")} added, ${count("-")} removed, ${count("~")} changed, ${unchanged} unchanged)`;
  const table = renderTable<(typeof rows)[number]>(
    [{ header: "CHANGE", value: (r) => r.change }, ...DRY_RUN_NODE_COLUMNS.map((c) => ({ header: c.header, value: (r: (typeof rows)[number]) => c.value(r.node) }))],
    rows,
  );
  return [`dry run for cluster ${result.clusterId}: nothing was changed`, summary, ...(rows.length > 0 ? [table] : []), "", ...planLines(result)].join("\n");
}

/** A live node as a dry run would show it (for the nodes a request removes). */
function dryRunNodeOf(node: NodeView): DryRunNode {
  return {
    id: node.id,
    hostname: cell(node.properties["hostname"]),
    hardwaretype: cell(node.properties["hardwaretype"]),
    imagetype: cell(node.properties["imagetype"]),
    services: [...node.services].sort(),
  };
}
