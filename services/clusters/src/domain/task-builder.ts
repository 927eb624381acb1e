import { NODE_TASKS, type Json, type JsonObject, type Service, type TaskName } from "@corral/contracts";
import type { TaskConfig, TaskMessage, TaskNodeInfo } from "@corral/shared";
import type { ClusterNode, ClusterRecord, StoredTask } from "./records.js";

/** Above this many nodes, tasks do not carry every other node (it would grow every message with the cluster). */
export const MAX_NODES_IN_TASK = 256;

const str = (v: Json | undefined) => (typeof v === "string" ? v : undefined);

/** The automator types the services on a node use (BOOTSTRAP prepares each of them). */
export function automatorsOf(services: readonly string[], defs: ReadonlyMap<string, Service>): string[] {
  const types = new Set<string>();
  for (const name of services) {
    for (const action of Object.values(defs.get(name)?.provisioner.actions ?? {})) if (action) types.add(action.type);
  }
  return [...types].sort();
}

/** What every plugin learns about a node. */
export function nodeInfo(node: ClusterNode, defs: ReadonlyMap<string, Service>): TaskNodeInfo {
  const p = node.properties;
  const info: TaskNodeInfo = {
    hostname: str(p["hostname"]) ?? "",
    ipaddresses: (p["ipaddresses"] as Record<string, string> | undefined) ?? {},
    nodenum: node.nodenum,
    hardwaretype: str(p["hardwaretype"]) ?? "",
    imagetype: str(p["imagetype"]) ?? "",
    services: node.services,
    automators: automatorsOf(node.services, defs),
  };
  for (const key of ["flavor", "image", "sshuser"] as const) {
    const v = str(p[key]);
    if (v !== undefined) info[key] = v;
  }
  return info;
}

export interface TaskBuildContext {
  cluster: ClusterRecord;
  planId: string;
  /** Every node of the cluster by id. */
  nodes: ReadonlyMap<string, ClusterNode>;
  defs: ReadonlyMap<string, Service>;
  /** The user's provider fields for this cluster. */
  credentials: JsonObject;
  /** The cluster config expanded for a node (service tasks only). */
  expandedConfig(nodeId: string): JsonObject;
  now: number;
}

interface NodeInfos {
  byId: ReadonlyMap<string, TaskNodeInfo>;
  /** `config.nodes` of every task of the context; undefined above {@link MAX_NODES_IN_TASK}. */
  all: Record<string, TaskNodeInfo> | undefined;
}

/** Each context's node infos, made once: every task of a dispatch carries its own node's and (usually) all of them. */
const nodeInfosByContext = new WeakMap<TaskBuildContext, NodeInfos>();

function nodeInfosOf(ctx: TaskBuildContext): NodeInfos {
  let infos = nodeInfosByContext.get(ctx);
  if (!infos) {
    const byId = new Map([...ctx.nodes.values()].map((n) => [n.id, nodeInfo(n, ctx.defs)]));
    infos = { byId, all: ctx.nodes.size <= MAX_NODES_IN_TASK ? Object.fromEntries(byId) : undefined };
    nodeInfosByContext.set(ctx, infos);
  }
  return infos;
}

/** Builds the message for one dispatch of one planned task; build the tasks of one dispatch with one context. */
export function buildTaskMessage(
  ctx: TaskBuildContext,
  task: StoredTask,
  taskId: string,
  dispatch: number,
  taskName: TaskName,
): TaskMessage {
  const node = ctx.nodes.get(task.nodeId);
  if (!node) throw new Error(`node ${task.nodeId} of cluster ${ctx.cluster.id} is missing`);
  const { cluster } = ctx;
  const infos = nodeInfosOf(ctx);
  const config: TaskConfig = {
    ...(infos.byId.get(node.id) as TaskNodeInfo),
    cluster: NODE_TASKS.has(taskName) ? cluster.config : ctx.expandedConfig(node.id),
    provider: {
      name: cluster.provider.name,
      providertype: cluster.provider.providertype,
      provisioner: { ...cluster.provider.provisioner, ...ctx.credentials },
      ...(cluster.provider.description !== undefined ? { description: cluster.provider.description } : {}),
    },
    results: node.results,
  };
  if (task.service) {
    const action = ctx.defs.get(task.service)?.provisioner.actions[taskName.toLowerCase() as "install"];
    if (action) config.service = { name: task.service, action: { type: action.type, fields: action.fields } };
  }
  if (infos.all) config.nodes = infos.all;
  else config.nodesOmitted = true;
  return {
    tenant: cluster.tenant,
    clusterId: cluster.id,
    planId: ctx.planId,
    taskId,
    dispatch,
    taskName,
    nodeId: node.id,
    submitTime: ctx.now,
    config,
  };
}
