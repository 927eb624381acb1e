/**
 * Builds the plan's task DAG in compact form: one *group* per (task name, service) of each segment of the plan
 * (segment.ts) holding the nodes it runs on, and edges between groups. A `node`-scoped edge orders the two groups' tasks on the same node (the
 * per-node chain CREATE → CONFIRM → BOOTSTRAP → INSTALL → …); a `cluster`-scoped edge orders every task of one
 * group before every task of the other (the cross-service rules). Edges between single tasks would grow with
 * the square of the nodes (every node's INSTALL waiting on INSTALL of a dependency on every node); between
 * groups the DAG's size depends on the services, not on the nodes.
 */
import type { PlanAction, TaskName } from "./actions.js";
import { groupEdges } from "./group-edges.js";
import { groupLevels } from "./group-levels.js";
import type { PlanRequest } from "@corral/contracts";
import { readPlanRequest } from "./plan-request.js";
import { planSegments } from "./plan-segments.js";
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
  /** For a rolling restart: the batch of nodes the group belongs to, counting from 1. */
  readonly batch?: number;
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
  /** Sorted by level, then task order (of the action, or of the phase of a node action), then service name. */
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

/** A group with its place in its segment's task order and its segment's batch. */
interface PlacedDraft extends TaskGroupDraft {
  readonly orderIndex: number;
  readonly batch: number | undefined;
}

/**
 * Builds the grouped task DAG; see {@link PlanGraph}. Shared by `planGraph` and `planAction`. The segments of the
 * plan (segment.ts) follow each other: every group without a successor in one segment comes before every group
 * without a predecessor in the next, so each segment's levels lie above the previous one's.
 */
export function buildIndexedPlanGraph(request: PlanRequest): IndexedPlanGraph {
  const cluster = readPlanRequest(request);
  const drafts: PlacedDraft[] = [];
  const edges: GroupEdge[] = [];
  let previousSinks: number[] = [];
  for (const segment of planSegments(request, cluster)) {
    const groups = draftTaskGroups(segment, cluster.definitions);
    if (groups.drafts.length === 0) continue;
    const offset = drafts.length;
    const orderIndex = new Map(segment.order.map((t, i) => [t, i] as const));
    for (const d of groups.drafts) drafts.push({ ...d, orderIndex: orderIndex.get(d.taskName) ?? 0, batch: segment.batch });
    const hasIn = new Set<number>();
    const hasOut = new Set<number>();
    for (const e of groupEdges(segment, groups)) {
      edges.push({ from: e.from + offset, to: e.to + offset, scope: e.scope });
      hasOut.add(e.from);
      hasIn.add(e.to);
    }
    const local = groups.drafts.map((_d, i) => i);
    for (const from of previousSinks) {
      for (const to of local) if (!hasIn.has(to)) edges.push({ from, to: to + offset, scope: "cluster" });
    }
    previousSinks = local.filter((i) => !hasOut.has(i)).map((i) => i + offset);
  }
  const levels = groupLevels(drafts.length, edges);
  return inPlanOrder(cluster.action, cluster.nodeIds, drafts, edges, levels);
}

/** Groups in a deterministic order (level, task order, service name), edges renumbered and sorted. */
function inPlanOrder(
  action: PlanAction,
  nodeIds: readonly string[],
  drafts: readonly PlacedDraft[],
  edges: readonly GroupEdge[],
  levels: readonly number[],
): IndexedPlanGraph {
  const sortedIdx = drafts
    .map((_d, i) => i)
    .sort((a, b) => {
      const da = drafts[a] as PlacedDraft;
      const db = drafts[b] as PlacedDraft;
      return (
        (levels[a] ?? 0) - (levels[b] ?? 0) ||
        da.orderIndex - db.orderIndex ||
        (da.service < db.service ? -1 : da.service > db.service ? 1 : 0)
      );
    });
  const remap = new Array<number>(drafts.length);
  sortedIdx.forEach((oldIdx, newIdx) => {
    remap[oldIdx] = newIdx;
  });
  const groups: IndexedGroup[] = sortedIdx.map((i) => {
    const d = drafts[i] as PlacedDraft;
    return {
      taskName: d.taskName,
      service: d.service,
      nodeIndexes: d.nodeIndexes,
      nodeIds: d.nodeIndexes.map((n) => nodeIds[n] as string),
      level: levels[i] ?? 0,
      ...(d.batch === undefined ? {} : { batch: d.batch }),
    };
  });
  const sortedEdges = edges
    .map((e) => ({ from: remap[e.from] as number, to: remap[e.to] as number, scope: e.scope }))
    .sort((a, b) => a.from - b.from || a.to - b.to);
  return { action, nodeIds, groups, edges: sortedEdges };
}
