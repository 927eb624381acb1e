/**
 * Builds the plan's task DAG in compact form: one *group* per (task name, service) holding the nodes it runs
 * on, and edges between groups. A `node`-scoped edge orders the two groups' tasks on the same node (the
 * per-node chain CREATE → CONFIRM → BOOTSTRAP → INSTALL → …); a `cluster`-scoped edge orders every task of one
 * group before every task of the other (the cross-service rules). Edges between single tasks would grow with
 * the square of the nodes (every node's INSTALL waiting on INSTALL of a dependency on every node); between
 * groups the DAG's size depends on the services, not on the nodes.
 */
import { ACTION_TASK_ORDER, type PlanAction, type TaskName } from "./actions.js";
import { resolveClusterDependencies } from "./dependencies.js";
import { groupEdges } from "./group-edges.js";
import { groupLevels } from "./group-levels.js";
import type { PlanRequest } from "@corral/contracts";
import { readPlanRequest, type PlanCluster } from "./plan-request.js";
import { plannedScope } from "./planned-scope.js";
import { draftTaskGroups, type TaskGroupDraft } from "./task-groups.js";

/** One (task name, service) group of the task DAG. */
export interface TaskGroup {
  readonly taskName: TaskName;
  /** Empty string for node-level tasks. */
  readonly service: string;
  /** Nodes the group's tasks run on, in input order. */
  readonly nodeIds: readonly string[];
  /** 0-based ASAP level: 1 + the longest path from a source group (all tasks of a group share it). */
  readonly level: number;
}

/** An edge between two groups (indexes into `PlanGraph.groups`). */
export interface GroupEdge {
  readonly from: number;
  readonly to: number;
  /** `node`: same-node tasks only (per-node chain); `cluster`: every task of `from` before every task of `to`. */
  readonly scope: "node" | "cluster";
}

/** The task DAG of one plan, by groups, reduced to direct dependencies. */
export interface PlanGraph {
  readonly action: PlanAction;
  /** Sorted by level, then task order of the action, then service name. */
  readonly groups: readonly TaskGroup[];
  readonly edges: readonly GroupEdge[];
}

/** Internal group with node indexes, shared with the stage cutter. */
export interface IndexedGroup extends TaskGroup {
  readonly nodeIndexes: readonly number[];
}

/** Internal result shared with the stage cutter. */
export interface IndexedPlanGraph {
  readonly action: PlanAction;
  readonly nodeIds: readonly string[];
  readonly groups: readonly IndexedGroup[];
  readonly edges: readonly GroupEdge[];
}

/** Builds the grouped task DAG; see {@link PlanGraph}. Shared by `planGraph` and `planAction`. */
export function buildIndexedPlanGraph(request: PlanRequest): IndexedPlanGraph {
  const cluster = readPlanRequest(request);
  const deps = resolveClusterDependencies(cluster.clusterServices, cluster.definitions);
  const scope = plannedScope(request, cluster, deps);
  const groups = draftTaskGroups(cluster, scope, deps);
  const edges = groupEdges(cluster.action, groups, scope.services, deps);
  const levels = groupLevels(groups.drafts.length, edges);
  return inPlanOrder(cluster, groups.drafts, edges, levels);
}

/** Groups in a deterministic order (level, task order of the action, service name), edges renumbered and sorted. */
function inPlanOrder(
  cluster: PlanCluster,
  drafts: readonly TaskGroupDraft[],
  edges: readonly GroupEdge[],
  levels: readonly number[],
): IndexedPlanGraph {
  const { action, nodeIds } = cluster;
  const orderIndex = new Map(ACTION_TASK_ORDER[action].map((t, i) => [t, i] as const));
  const sortedIdx = drafts
    .map((_d, i) => i)
    .sort((a, b) => {
      const da = drafts[a] as TaskGroupDraft;
      const db = drafts[b] as TaskGroupDraft;
      return (
        (levels[a] ?? 0) - (levels[b] ?? 0) ||
        (orderIndex.get(da.taskName) ?? 0) - (orderIndex.get(db.taskName) ?? 0) ||
        (da.service < db.service ? -1 : da.service > db.service ? 1 : 0)
      );
    });
  const remap = new Array<number>(drafts.length);
  sortedIdx.forEach((oldIdx, newIdx) => {
    remap[oldIdx] = newIdx;
  });
  const groups: IndexedGroup[] = sortedIdx.map((i) => {
    const d = drafts[i] as TaskGroupDraft;
    return {
      taskName: d.taskName,
      service: d.service,
      nodeIndexes: d.nodeIndexes,
      nodeIds: d.nodeIndexes.map((n) => nodeIds[n] as string),
      level: levels[i] ?? 0,
    };
  });
  const sortedEdges = edges
    .map((e) => ({ from: remap[e.from] as number, to: remap[e.to] as number, scope: e.scope }))
    .sort((a, b) => a.from - b.from || a.to - b.to);
  return { action, nodeIds, groups, edges: sortedEdges };
}
