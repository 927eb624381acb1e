/**
 * The plans of the node actions (docs/catalog.md, Plans): `add_nodes`, `remove_nodes` and `replace_node`, as up to
 * three phases that follow each other:
 *
 * 1. arrive: the new nodes are built and their services brought up, as a create does (dependencies on the
 *    cluster after the change; their running dependencies elsewhere are started again only with
 *    `options.startUnplannedDependencies`);
 * 2. leave: a removed node's services are stopped and removed (dependents first), then its machine deleted; a
 *    replaced node's machine is deleted; an unreachable node gets nothing (dependencies on the cluster before the
 *    change);
 * 3. reconfigure: every changed remaining node configures its services, with `restart` stopped before (dependents
 *    first) and started after (dependencies first), in batches with `rolling`.
 */
import { BadRequestError, describeValue, type PlanRequest } from "@corral/contracts";
import { NODE_CHANGE_TASK_ORDER, PlanAction, type NodeChangeAction } from "./actions.js";
import { resolveClusterDependencies } from "./dependencies.js";
import type { PlanCluster } from "./plan-request.js";
import { inRollingBatches, readRolling } from "./rolling.js";
import { restrictServiceNodes, type PlanSegment } from "./segment.js";

/** The node lists of a node action, as node indexes (ascending). */
interface NodeChanges {
  readonly added: readonly number[];
  readonly removed: readonly number[];
  readonly unreachable: ReadonlySet<number>;
  readonly changed: readonly number[];
}

const LIST_FIELDS = ["addedNodes", "removedNodes", "unreachableNodes", "changedNodes"] as const;
type ListField = (typeof LIST_FIELDS)[number];

/** The node actions take node lists and `restart`, and none of the fields of the cluster-wide actions. */
export function refuseNodeChangeFields(request: PlanRequest, action: PlanAction): void {
  for (const field of [...LIST_FIELDS, "restart"] as const) {
    if (request[field] !== undefined) throw new BadRequestError(`${action} does not take ${field}`);
  }
}

function readNodeChanges(request: PlanRequest, cluster: PlanCluster, action: NodeChangeAction): NodeChanges {
  if (request.service !== undefined) throw new BadRequestError(`${action} does not take a single service`);
  if (request.addedServices !== undefined) throw new BadRequestError(`${action} does not take added services`);
  if (request.restart !== undefined && typeof request.restart !== "boolean") {
    throw new BadRequestError(`restart must be true or false, got ${describeValue(request.restart)}`);
  }
  const indexOf = new Map(cluster.nodeIds.map((id, i) => [id, i] as const));
  const listedIn = new Map<number, ListField>();
  const read = (field: ListField): number[] => {
    const value = request[field] as unknown;
    if (value === undefined) return [];
    if (!Array.isArray(value)) throw new BadRequestError(`${field} must be an array of node ids`);
    const out = new Set<number>();
    for (const id of value as unknown[]) {
      const index = typeof id === "string" ? indexOf.get(id) : undefined;
      if (index === undefined) throw new BadRequestError(`${field}: ${describeValue(id)} is no node of the request`);
      out.add(index);
      const other = listedIn.get(index);
      if (field !== "unreachableNodes" && other !== undefined && other !== field) {
        throw new BadRequestError(`node ${String(id)} is in both ${other} and ${field}`);
      }
      if (field !== "unreachableNodes") listedIn.set(index, field);
    }
    return [...out].sort((a, b) => a - b);
  };
  const added = read("addedNodes");
  const removed = read("removedNodes");
  const changed = read("changedNodes");
  const unreachable = new Set(read("unreachableNodes"));
  for (const n of unreachable) {
    if (!removed.includes(n)) throw new BadRequestError(`unreachableNodes: node ${cluster.nodeIds[n]} is not removed`);
  }
  const takesAdded = action !== PlanAction.RemoveNodes;
  const takesRemoved = action !== PlanAction.AddNodes;
  if (takesAdded !== added.length > 0) {
    throw new BadRequestError(takesAdded ? `${action} needs addedNodes` : `${action} does not take addedNodes`);
  }
  if (takesRemoved !== removed.length > 0) {
    throw new BadRequestError(takesRemoved ? `${action} needs removedNodes` : `${action} does not take removedNodes`);
  }
  return { added, removed, unreachable, changed };
}

/**
 * The phases of a node action as plan segments (see the module comment).
 * @throws BadRequestError for node lists that do not fit the action or the nodes, for fields the node actions do
 *   not take, for a bad `rolling` (see readRolling, inRollingBatches), or a dependency cycle.
 */
export function nodeChangeSegments(request: PlanRequest, cluster: PlanCluster, action: NodeChangeAction): PlanSegment[] {
  const changes = readNodeChanges(request, cluster, action);
  const rolling = readRolling(request, action);
  const { definitions, serviceNodes } = cluster;
  const addedSet = new Set(changes.added);
  const removedSet = new Set(changes.removed);
  const hostsBefore = restrictServiceNodes(serviceNodes, (n) => !addedSet.has(n));
  const hostsAfter = restrictServiceNodes(serviceNodes, (n) => !removedSet.has(n));
  const depsBefore = resolveClusterDependencies([...hostsBefore.keys()].sort(), definitions);
  const depsAfter = resolveClusterDependencies([...hostsAfter.keys()].sort(), definitions);
  const segments: PlanSegment[] = [];

  segments.push({
    order: NODE_CHANGE_TASK_ORDER.arrive,
    nodes: changes.added,
    serviceNodes: restrictServiceNodes(serviceNodes, (n) => addedSet.has(n)),
    deps: depsAfter,
    hosts: hostsAfter,
    startUnplannedDependencies: cluster.startUnplannedDependencies,
  });

  const leaving = changes.removed.filter((n) => !changes.unreachable.has(n));
  const leavingSet = new Set(leaving);
  const removesServices = action === PlanAction.RemoveNodes;
  segments.push({
    order: removesServices ? NODE_CHANGE_TASK_ORDER.remove : NODE_CHANGE_TASK_ORDER.replaced,
    nodes: leaving,
    serviceNodes: removesServices ? restrictServiceNodes(serviceNodes, (n) => leavingSet.has(n)) : new Map(),
    deps: depsBefore,
    hosts: hostsBefore,
    startUnplannedDependencies: false,
  });

  const changedSet = new Set(changes.changed);
  const reconfigure: PlanSegment = {
    order: request.restart === true ? NODE_CHANGE_TASK_ORDER.reconfigureWithRestart : NODE_CHANGE_TASK_ORDER.reconfigure,
    nodes: changes.changed,
    serviceNodes: restrictServiceNodes(serviceNodes, (n) => changedSet.has(n)),
    deps: depsAfter,
    hosts: hostsAfter,
    startUnplannedDependencies: false,
  };
  segments.push(...(rolling === undefined ? [reconfigure] : inRollingBatches(reconfigure, definitions, rolling)));
  return segments;
}
