import { NODE_TASKS, type Json, type JsonObject, type Service, type TaskMessage } from "@corral/contracts";
import { createMacroContext, compileConfig, expandConfig } from "@corral/solver";
import { formatTaskId, clusterNodeIds } from "../domain/ids.js";
import { leavingNodeIds, macroNode } from "../domain/node-config.js";
import type { Dispatch, PlanEvent } from "../domain/plan-machine.js";
import { stageStartOf, taskPositionOf } from "../domain/plan-steps.js";
import type { ClusterNode, ClusterRecord, PlanRecord, StoredTask } from "../domain/records.js";
import { buildTaskMessage } from "../domain/task-builder.js";
import type { EngineDeps } from "../adapters/deps.js";
import type { NodeChange } from "../adapters/node-store.js";
import type { DispatchMemory } from "./dispatch-memory.js";

/** A dispatch the engine could not publish (e.g. a macro that cannot be expanded): it fails like a task. */
export interface DispatchFailure {
  index: number;
  dispatch: number;
  taskName: Dispatch["taskName"];
  message: string;
}

/** State the caller has just written and need not be read back (a new cluster's record, nodes and its plan's fields). */
export interface KnownState {
  cluster: ClusterRecord;
  nodes: ClusterNode[];
  credentials: JsonObject;
}

export interface Dispatcher {
  /**
   * Publishes the given dispatches and whole stages of a plan, then reports them as published to the plan
   * actor. Returns the events to apply to the plan (published marks and any failures).
   */
  publish(
    plan: PlanRecord,
    dispatches: readonly Dispatch[],
    stages: readonly number[],
    options?: { known?: KnownState; republish?: boolean },
  ): Promise<PlanEvent[]>;
}

export function createDispatcher(deps: EngineDeps, memory: DispatchMemory): Dispatcher {
  /** Applies an add_services plan's node changes before its first stage (idempotent). */
  const applyNodeServices = async (plan: PlanRecord, nodes: Map<string, ClusterNode>) => {
    const changes = new Map<string, NodeChange>();
    for (const [nodeId, services] of Object.entries(plan.nodeServices ?? {})) {
      const change: NodeChange = (node) => (node.services.join(",") === services.join(",") ? undefined : { ...node, services });
      // Only nodes whose services differ as read: the change decides again on the node it is applied to.
      const node = nodes.get(nodeId);
      if (node && change(node)) changes.set(nodeId, change);
    }
    for (const [nodeId, updated] of await deps.nodes.modifyMany(plan.clusterId, changes)) nodes.set(nodeId, updated);
  };

  return {
    async publish(plan, dispatches, stages, options = {}) {
      const { known } = options;
      if (dispatches.length === 0 && stages.length === 0) return [];
      // A republish comes from the reconciler, after a crash perhaps: it reads everything.
      const memo = options.republish ? undefined : memory.get(plan);
      const cluster: ClusterRecord | undefined =
        known?.cluster ?? memo?.cluster ?? (await deps.clusters.get(plan.clusterId))?.value;
      if (!cluster) throw new Error(`cluster ${plan.clusterId} of plan ${plan.id} is missing`);
      const nodeIds = clusterNodeIds(cluster);
      const applied = plan.resultsApplied ?? 0;
      const [nodeList, credentials] = await Promise.all([
        known?.nodes ??
          (memo?.nodesCurrentAt === applied ? deps.nodes.cachedMany(cluster.id, nodeIds) : undefined) ??
          deps.nodes.getMany(cluster.id, nodeIds),
        known?.credentials ?? memo?.credentials ?? deps.credentials.get(cluster.id, plan.id),
      ]);
      memory.remember(plan, { cluster, credentials, nodesCurrentAt: applied });
      const nodes = new Map(nodeList.map((n) => [n.id, n]));
      if (stages.includes(0)) await applyNodeServices(plan, nodes);

      // Which planned task each dispatch runs, and the tasks of its stage (its step's other nodes).
      const work: Array<{ task: StoredTask; stage: StoredTask[]; index: number; dispatch: number; taskName: Dispatch["taskName"] }> = [];
      const stageCache = new Map<number, StoredTask[]>();
      const tasksOf = async (stage: number) => {
        let tasks = stageCache.get(stage);
        if (!tasks) stageCache.set(stage, (tasks = await deps.plans.stageTasks(plan, stage)));
        return tasks;
      };
      for (const stage of stages) {
        const first = stageStartOf(plan, stage);
        const tasks = await tasksOf(stage);
        tasks.forEach((task, i) => work.push({ task, stage: tasks, index: first + i, dispatch: 1, taskName: task.taskName }));
      }
      for (const d of dispatches) {
        const { stage, position } = taskPositionOf(plan, d.index);
        const tasks = await tasksOf(stage);
        const task = tasks[position];
        if (task) work.push({ task, stage: tasks, index: d.index, dispatch: d.dispatch, taskName: d.taskName });
      }

      const defs = new Map<string, Service>(cluster.serviceDefs.map((s) => [s.name, s]));
      const needsExpansion = work.some((w) => !NODE_TASKS.has(w.taskName));
      const contextOf = (list: readonly ClusterNode[]) => createMacroContext({ nodes: list.map(macroNode), owner: cluster.ownerId });
      const leaving = leavingNodeIds(cluster, plan.id);
      const macroContext = needsExpansion ? contextOf([...nodes.values()]) : undefined;
      // The nodes that stay see the cluster without the ones leaving; a leaving node's own tasks see every node.
      const remainingContext =
        needsExpansion && leaving.size > 0 ? contextOf([...nodes.values()].filter((n) => !leaving.has(n.id))) : macroContext;
      const compiled = needsExpansion ? compileConfig(cluster.config as Json) : undefined;
      const expanded = new Map<string, JsonObject>();
      const expandedConfig = (nodeId: string) => {
        let config = expanded.get(nodeId);
        if (!config) expanded.set(nodeId, (config = expandConfig(compiled!, (leaving.has(nodeId) ? macroContext : remainingContext)!, nodeId) as JsonObject));
        return config;
      };

      const now = deps.now();
      const messages: TaskMessage[] = [];
      const failures: DispatchFailure[] = [];
      const buildContext = { cluster, planId: plan.id, nodes, defs, credentials, expandedConfig, now };
      for (const w of work) {
        try {
          messages.push(
            buildTaskMessage(
              buildContext,
              w.task,
              formatTaskId(plan.id, w.index),
              w.dispatch,
              w.taskName,
              w.stage,
            ),
          );
        } catch (err) {
          failures.push({ index: w.index, dispatch: w.dispatch, taskName: w.taskName, message: (err as Error).message });
        }
      }
      if (options.republish) for (const m of messages) m.republished = true;
      await deps.publisher.publishTasks(messages);
      deps.metrics.tasksPublished(messages);
      const events: PlanEvent[] = [
        { type: "dispatch.published", stages: [...stages], tasks: work.map((w) => ({ index: w.index, dispatch: w.dispatch })) },
      ];
      for (const f of failures) {
        events.push({ type: "task.result", index: f.index, dispatch: f.dispatch, taskName: f.taskName, ok: false, message: f.message, at: now });
      }
      return events;
    },
  };
}
