import {
  NODE_TASKS,
  type Json,
  type JsonObject,
  type Service,
  type TaskName,
  type TaskConfig,
  type TaskMessage,
  type TaskNodeInfo,
  type TaskNodeReach,
} from "@corral/contracts";
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

/** What every task of a context shares: one object each, so the task encoder encodes it once (task-encoding.ts). */
interface SharedParts {
  byId: ReadonlyMap<string, TaskNodeInfo>;
  /** `config.nodes` of every task of the context; undefined above {@link MAX_NODES_IN_TASK}. */
  all: Record<string, TaskNodeInfo> | undefined;
  provider: TaskConfig["provider"];
  /** `config.stepNodes` by stage (its tasks' array) and step (`<taskName> <service>`): one object per step. */
  stepNodes: WeakMap<readonly StoredTask[], Map<string, Record<string, TaskNodeReach>>>;
}

const sharedPartsByContext = new WeakMap<TaskBuildContext, SharedParts>();

function sharedPartsOf(ctx: TaskBuildContext): SharedParts {
  let parts = sharedPartsByContext.get(ctx);
  if (!parts) {
    const byId = new Map([...ctx.nodes.values()].map((n) => [n.id, nodeInfo(n, ctx.defs)]));
    const { provider } = ctx.cluster;
    parts = {
      byId,
      all: ctx.nodes.size <= MAX_NODES_IN_TASK ? Object.fromEntries(byId) : undefined,
      provider: {
        name: provider.name,
        providertype: provider.providertype,
        provisioner: { ...provider.provisioner, ...ctx.credentials },
        ...(provider.description !== undefined ? { description: provider.description } : {}),
      },
      stepNodes: new WeakMap(),
    };
    sharedPartsByContext.set(ctx, parts);
  }
  return parts;
}

/** The results that say how to reach a node (no secret among them: `ssh-auth` names where the credential is). */
const REACH_RESULTS = ["ssh-auth", "ssh_host_keys"] as const;

/** Whether a service action asks to play every node of its step at once (docs/providers.md, Ansible, `hosts`). */
const playsWholeStep = (fields: Readonly<Record<string, string>>) => String(fields["hosts"] ?? "").trim() === "service";

/** Every node whose task in `stage` is `task`'s action of `task`'s service, with how to reach it. */
function stepNodesOf(ctx: TaskBuildContext, shared: SharedParts, stage: readonly StoredTask[], task: StoredTask): Record<string, TaskNodeReach> {
  let byStep = shared.stepNodes.get(stage);
  if (!byStep) shared.stepNodes.set(stage, (byStep = new Map()));
  const step = `${task.taskName} ${task.service}`;
  let nodes = byStep.get(step);
  if (!nodes) {
    nodes = {};
    for (const t of stage) {
      if (t.taskName !== task.taskName || t.service !== task.service) continue;
      const results = ctx.nodes.get(t.nodeId)?.results ?? {};
      const reach: TaskNodeReach = {};
      for (const key of REACH_RESULTS) {
        const value = results[key];
        if (value !== undefined) reach[key] = value;
      }
      nodes[t.nodeId] = reach;
    }
    byStep.set(step, nodes);
  }
  return nodes;
}

/**
 * Builds the message for one dispatch of one planned task; build the tasks of one dispatch with one context.
 * `stage` is every task of the task's stage: a service action with `hosts: service` carries its step's nodes.
 */
export function buildTaskMessage(
  ctx: TaskBuildContext,
  task: StoredTask,
  taskId: string,
  dispatch: number,
  taskName: TaskName,
  stage?: readonly StoredTask[],
): TaskMessage {
  const node = ctx.nodes.get(task.nodeId);
  if (!node) throw new Error(`node ${task.nodeId} of cluster ${ctx.cluster.id} is missing`);
  const { cluster } = ctx;
  const shared = sharedPartsOf(ctx);
  const config: TaskConfig = {
    ...(shared.byId.get(node.id) as TaskNodeInfo),
    cluster: NODE_TASKS.has(taskName) ? cluster.config : ctx.expandedConfig(node.id),
    provider: shared.provider,
    results: node.results,
  };
  if (task.service) {
    const action = ctx.defs.get(task.service)?.provisioner.actions[taskName.toLowerCase() as "install"];
    if (action) config.service = { name: task.service, action: { type: action.type, fields: action.fields } };
    if (action && stage && shared.all && playsWholeStep(action.fields)) config.stepNodes = stepNodesOf(ctx, shared, stage, task);
  }
  if (shared.all) config.nodes = shared.all;
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
