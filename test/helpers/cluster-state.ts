/**
 * Reads what the clusters service stored (clusters, plans and their task pages, nodes) through
 * `@corral/clusters/testing`, so crash tests assert from stored state, and checks a finished cluster for consistency.
 */
import {
  openStoredClusterState,
  type ClusterNode,
  type ClusterRecord,
  type PlannedTask,
  type PlanRecord,
  type StoredClusterState,
  type StoredTask,
} from "@corral/clusters/testing";

export type { ClusterNode, ClusterRecord, PlannedTask, PlanRecord, StoredTask };
export type ClusterState = StoredClusterState;
export const openClusterState = openStoredClusterState;

/**
 * The plan's recorded unpublished dispatches that are still due: stages not yet passed and retries of the current
 * stage. `undefined` when none.
 */
export function outstandingUnpublished(plan: PlanRecord): PlanRecord["actor"]["context"]["unpublished"] | undefined {
  const c = plan.actor.context;
  if (!c.unpublished) return undefined;
  const first = c.stageStarts[c.stage] ?? Number.POSITIVE_INFINITY;
  const stages = c.unpublished.stages.filter((s) => s >= c.stage);
  const tasks = c.unpublished.tasks.filter((t) => t.index >= first);
  return stages.length || tasks.length ? { ...c.unpublished, stages, tasks } : undefined;
}

/**
 * Recorded unpublished dispatches of stages the plan has already passed (so they certainly were published): left
 * when the process died between publishing and recording it. `undefined` when none.
 */
export function staleUnpublished(plan: PlanRecord): PlanRecord["actor"]["context"]["unpublished"] | undefined {
  const c = plan.actor.context;
  if (!c.unpublished) return undefined;
  const first = c.stageStarts[c.stage] ?? Number.POSITIVE_INFINITY;
  const stages = c.unpublished.stages.filter((s) => s < c.stage);
  const tasks = c.unpublished.tasks.filter((t) => t.index < first);
  return stages.length || tasks.length ? { ...c.unpublished, stages, tasks } : undefined;
}

/**
 * What is wrong with a cluster whose job should have ended with `status` (empty when nothing): the cluster's
 * status and action status; its current plan finished, every task completed, nothing due left unpublished, no failure;
 * each planned task recorded exactly once as complete in its node's history (none twice, none missing, none
 * foreign); each node created once (one CREATE in its history, a provider id). `options.leftNodes`: nodes the plan
 * took out of the cluster (a removal, a replace), whose tasks have no stored node to be recorded in.
 */
export async function clusterProblems(
  state: ClusterState,
  clusterId: string,
  status: "active" | "terminated",
  options: { leftNodes?: readonly string[] } = {},
): Promise<string[]> {
  const problems: string[] = [];
  const cluster = (await state.cluster(clusterId))?.value;
  if (!cluster) return [`cluster ${clusterId} is not stored`];
  if (cluster.actor.value !== status) problems.push(`cluster ${clusterId} is ${String(cluster.actor.value)}, not ${status}`);
  if (cluster.actor.context.actionstatus !== "complete") {
    problems.push(`cluster ${clusterId} action status is ${cluster.actor.context.actionstatus}`);
  }
  const planId = cluster.actor.context.planId;
  if (cluster.jobs[cluster.jobs.length - 1] !== planId) problems.push(`cluster ${clusterId}: last job is not ${planId}`);
  const plan = (await state.plan(clusterId, planId))?.value;
  if (!plan) return [...problems, `plan ${planId} is not stored`];
  const c = plan.actor.context;
  const total = plan.stageSizes.reduce((a, b) => a + b, 0);
  if (plan.actor.value !== "succeeded") problems.push(`plan ${planId} is ${String(plan.actor.value)}`);
  if (c.completed !== total) problems.push(`plan ${planId}: ${c.completed} of ${total} tasks completed`);
  if (c.stage !== plan.stageSizes.length) problems.push(`plan ${planId}: at stage ${c.stage} of ${plan.stageSizes.length}`);
  // Entries for stages the plan already passed are stale, not outstanding (see `staleUnpublished`).
  const outstanding = outstandingUnpublished(plan);
  if (outstanding) problems.push(`plan ${planId}: dispatches still unpublished ${JSON.stringify(outstanding)}`);
  if (c.failure !== null) problems.push(`plan ${planId}: failure ${JSON.stringify(c.failure)}`);
  if (Object.keys(c.retries).length > 0) problems.push(`plan ${planId}: retries left ${JSON.stringify(c.retries)}`);
  if (cluster.progress.stepstotal !== total || cluster.progress.stepscompleted !== total) {
    problems.push(`cluster ${clusterId}: progress ${JSON.stringify(cluster.progress)}, plan has ${total} tasks`);
  }

  const tasks = await state.planTasks(plan);
  const nodes = new Map((await state.nodes(cluster)).map((n) => [n.id, n]));
  if (nodes.size !== cluster.numNodes) problems.push(`cluster ${clusterId}: ${nodes.size} of ${cluster.numNodes} nodes stored`);
  const planned = new Set(tasks.map((t) => t.taskId));
  for (const node of nodes.values()) {
    const complete = new Map<string, number>();
    for (const a of node.actions) {
      if (!a.taskId.startsWith(planId + "-")) continue;
      if (!planned.has(a.taskId)) problems.push(`node ${node.id}: action ${a.taskId} is not a task of plan ${planId}`);
      if (a.status === "complete") complete.set(a.taskId, (complete.get(a.taskId) ?? 0) + 1);
      else problems.push(`node ${node.id}: ${a.action} ${a.taskId} failed: ${a.stderr ?? ""}`);
    }
    for (const [taskId, n] of complete) if (n > 1) problems.push(`node ${node.id}: task ${taskId} complete ${n} times`);
    for (const t of tasks.filter((t) => t.nodeId === node.id)) {
      if (!complete.has(t.taskId)) problems.push(`node ${node.id}: task ${t.taskId} (${t.taskName} ${t.service}) has no complete entry`);
    }
    if (plan.action === "CLUSTER_CREATE") {
      const creates = node.actions.filter((a) => a.action === "CREATE").length;
      if (creates !== 1) problems.push(`node ${node.id}: ${creates} CREATE entries`);
      if (typeof node.results["providerid"] !== "string") problems.push(`node ${node.id}: no providerid`);
    }
  }
  const left = new Set(options.leftNodes ?? []);
  for (const t of tasks) if (!nodes.has(t.nodeId) && !left.has(t.nodeId)) problems.push(`task ${t.taskId}: node ${t.nodeId} is not stored`);
  return problems;
}
