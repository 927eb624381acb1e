/** How clusters, their nodes and plans look as tables. */
import type { ClusterDetails, ClusterSummary, DryRunNode, DryRunResult, NodeView, PlanView } from "@corral/contracts";
import type { PlanProgress } from "../progress/plan-progress.js";
import { formatDuration } from "../progress/progress-text.js";
import { cell, isPlainObject, renderFields, renderTable } from "./table.js";

/** ms since the epoch as ISO time to the second (UTC); 0 means never. */
export const formatTime = (ms: number): string => (ms === 0 ? "never" : new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z"));

const progressText = (c: Pick<ClusterSummary, "progress">) =>
  `${c.progress.action} ${c.progress.actionstatus} ${c.progress.stepscompleted}/${c.progress.stepstotal}`;

/** `corral status`: one line per cluster. */
export function clusterTable(clusters: readonly ClusterSummary[]): string {
  if (clusters.length === 0) return "no clusters";
  return renderTable<ClusterSummary>(
    [
      { header: "ID", value: (c) => c.id },
      { header: "NAME", value: (c) => c.name },
      { header: "TEMPLATE", value: (c) => c.clusterTemplate.name },
      { header: "STATUS", value: (c) => c.status },
      { header: "NODES", value: (c) => String(c.numNodes) },
      { header: "PROGRESS", value: progressText },
      { header: "OWNER", value: (c) => c.ownerId },
      { header: "EXPIRES", value: (c) => formatTime(c.expireTime) },
    ],
    clusters,
  );
}

export function nodeTable(nodes: readonly NodeView[]): string {
  if (nodes.length === 0) return "no nodes";
  return renderTable<NodeView>(
    [
      { header: "NODE", value: (n) => n.id },
      { header: "HOSTNAME", value: (n) => cell(n.properties["hostname"]) },
      { header: "IP", value: (n) => addresses(n.properties["ipaddresses"] ?? n.properties["ipaddress"]) },
      { header: "SERVICES", value: (n) => n.services.join(",") },
      { header: "LAST ACTION", value: (n) => lastAction(n) },
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
  const nodes = renderTable<DryRunNode>(
    [
      { header: "NODE", value: (n) => n.id },
      { header: "HOSTNAME", value: (n) => n.hostname },
      { header: "HARDWARE", value: (n) => n.hardwaretype },
      { header: "IMAGE", value: (n) => n.imagetype },
      { header: "SERVICES", value: (n) => n.services.join(",") },
    ],
    result.layout.nodes,
  );
  const stages = result.plan.stages.map((stage, i) => `stage ${i + 1}: ${stage.map((t) => `${t.taskName}${t.service ? ` ${t.service}` : ""} on ${t.nodeId}`).join(", ")}`);
  const tasks = result.plan.stages.reduce((n, stage) => n + stage.length, 0);
  return [
    `dry run for cluster ${result.clusterId}: nothing was changed`,
    `layout: ${result.layout.nodes.length} nodes, services ${result.layout.services.join(", ")}`,
    nodes,
    "",
    `plan ${result.plan.action}: ${result.plan.stages.length} stages, ${tasks} tasks`,
    ...stages,
  ].join("\n");
}
