/**
 * A plan is a sequence of segments: tasks on some nodes in one task order, ordered by one set of dependencies.
 * Every task of a segment ends before the first task of the next one starts. A cluster-wide action is one
 * segment; a node action is one per phase (new nodes, leaving nodes, reconfigured nodes); a rolling restart is
 * one per batch of nodes.
 */
import type { TaskName } from "./actions.js";
import type { ClusterDependencies } from "./dependencies.js";

export interface PlanSegment {
  /** The task order on every node of the segment (ordering rule 1). */
  readonly order: readonly TaskName[];
  /** Indexes of the nodes that get the order's node-level tasks, ascending. */
  readonly nodes: readonly number[];
  /** Each planned service with the indexes of the nodes its tasks run on, ascending. */
  readonly serviceNodes: ReadonlyMap<string, readonly number[]>;
  /** The dependencies the cross-service rules follow. */
  readonly deps: ClusterDependencies;
  /** Every node of the cluster holding each service (where a START of an unplanned dependency runs). */
  readonly hosts: ReadonlyMap<string, readonly number[]>;
  /** START the running runtime dependencies that are not planned (see PlanOptions). */
  readonly startUnplannedDependencies: boolean;
  /** The batch of a rolling restart, counting from 1. */
  readonly batch?: number;
}

/** `serviceNodes` with each list kept to the nodes `keep` accepts; services left without nodes are dropped. */
export function restrictServiceNodes(
  serviceNodes: ReadonlyMap<string, readonly number[]>,
  keep: (node: number) => boolean,
): Map<string, readonly number[]> {
  const out = new Map<string, readonly number[]>();
  for (const [service, nodes] of serviceNodes) {
    const kept = nodes.filter(keep);
    if (kept.length > 0) out.set(service, kept);
  }
  return out;
}
