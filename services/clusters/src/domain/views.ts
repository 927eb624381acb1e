import type {
  ClusterDetails,
  ClusterProgress,
  ClusterStatusView,
  ClusterSummary,
  NodeView,
  PlanView,
} from "@corral/contracts";
import { statusOf } from "./cluster-status.js";
import { formatTaskId } from "./ids.js";
import { stepsOf } from "./plan-steps.js";
import type { ClusterNode, ClusterRecord, PlanRecord, StoredTask } from "./records.js";

/** Live progress of a cluster's current or last job. */
export type Progress = ClusterProgress;

export function progressOf(cluster: ClusterRecord, plan: PlanRecord | undefined): Progress {
  const c = cluster.actor.context;
  const steps = plan && plan.id === c.planId ? stepsOf(plan) : cluster.progress;
  return { action: c.action, actionstatus: c.actionstatus, ...steps };
}

/** The fields both forms of a cluster (summary and full) share. */
function clusterBasics(cluster: ClusterRecord, progress: Progress) {
  return {
    id: cluster.id,
    name: cluster.name,
    description: cluster.description,
    createTime: cluster.createTime,
    expireTime: cluster.expireTime,
    services: cluster.services,
    ownerId: cluster.ownerId,
    status: statusOf(cluster),
    progress,
  };
}

/** The summary form of a cluster (`GET /clusters`). */
export function clusterSummary(cluster: ClusterRecord, progress: Progress): ClusterSummary {
  return {
    ...clusterBasics(cluster, progress),
    numNodes: cluster.numNodes,
    provider: { name: cluster.provider.name },
    clusterTemplate: { name: cluster.clusterTemplate.name },
  };
}

/** A node as the full form shows it. */
export function nodeView(node: ClusterNode): NodeView {
  return {
    id: node.id,
    clusterId: node.clusterId,
    services: node.services,
    properties: node.properties,
    actions: node.actions.map((a) => ({
      taskId: a.taskId,
      service: a.service,
      action: a.action,
      submitTime: a.submitTime,
      statusTime: a.statusTime,
      status: a.status,
      ...(a.stdout !== undefined ? { stdout: a.stdout } : {}),
      ...(a.stderr !== undefined ? { stderr: a.stderr } : {}),
    })),
    ...(node.health ? { health: node.health } : {}),
  };
}

/** The full form of a cluster (`GET /clusters/{id}`). */
export function clusterDetails(cluster: ClusterRecord, nodes: ClusterNode[], progress: Progress): ClusterDetails {
  return {
    ...clusterBasics(cluster, progress),
    provider: cluster.provider,
    clusterTemplate: cluster.clusterTemplate,
    jobs: cluster.jobs,
    config: cluster.config,
    nodes: nodes.map(nodeView),
  };
}

/** The body of `GET /clusters/{id}/status`. */
export function clusterStatus(cluster: ClusterRecord, progress: Progress): ClusterStatusView {
  return {
    clusterid: cluster.id,
    status: statusOf(cluster),
    action: progress.action,
    actionstatus: progress.actionstatus,
    stepstotal: progress.stepstotal,
    stepscompleted: progress.stepscompleted,
  };
}

/** A plan as the API shows it. */
export function planView(plan: PlanRecord, stages: StoredTask[][]): PlanView {
  let index = 0;
  return {
    id: plan.id,
    clusterId: plan.clusterId,
    action: plan.action,
    currentStage: Math.min(plan.actor.context.stage, Math.max(0, stages.length - 1)),
    status: plan.actor.value as string,
    createTime: plan.createTime,
    stages: stages.map((stage) =>
      stage.map((t) => ({
        id: formatTaskId(plan.id, index++),
        taskName: t.taskName,
        nodeId: t.nodeId,
        ...(t.service ? { service: t.service } : {}),
      })),
    ),
  };
}
