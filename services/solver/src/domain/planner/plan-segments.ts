/**
 * The segments of a plan (segment.ts): the one of a cluster-wide action, in batches for a rolling restart, or the
 * phases of a node action.
 */
import type { PlanRequest } from "@corral/contracts";
import { ACTION_TASK_ORDER, isNodeChangeAction } from "./actions.js";
import { resolveClusterDependencies } from "./dependencies.js";
import { nodeChangeSegments, refuseNodeChangeFields } from "./node-changes.js";
import type { PlanCluster } from "./plan-request.js";
import { plannedScope } from "./planned-scope.js";
import { inRollingBatches, readRolling } from "./rolling.js";
import type { PlanSegment } from "./segment.js";

/** @throws BadRequestError for fields the action does not take, a dependency cycle, or a refused rolling restart. */
export function planSegments(request: PlanRequest, cluster: PlanCluster): PlanSegment[] {
  const { action } = cluster;
  if (isNodeChangeAction(action)) return nodeChangeSegments(request, cluster, action);
  const deps = resolveClusterDependencies(cluster.clusterServices, cluster.definitions);
  const scope = plannedScope(request, cluster, deps);
  refuseNodeChangeFields(request, action);
  const rolling = readRolling(request, action);
  const segment: PlanSegment = {
    order: ACTION_TASK_ORDER[action],
    nodes: scope.nodes,
    serviceNodes: new Map([...scope.services].map((s) => [s, cluster.serviceNodes.get(s) ?? []] as const)),
    deps,
    hosts: cluster.serviceNodes,
    startUnplannedDependencies: cluster.startUnplannedDependencies,
  };
  return rolling === undefined ? [segment] : inRollingBatches(segment, cluster.definitions, rolling);
}
