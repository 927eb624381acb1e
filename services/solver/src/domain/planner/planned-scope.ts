/**
 * Which services and nodes a plan touches (docs/catalog.md, Plans): all of them, one service with its runtime closure
 * (start) or its runtime dependents (stop, restart), or the added services and the nodes holding them.
 */
import { BadRequestError, type PlanRequest } from "@corral/contracts";
import { PlanAction, SINGLE_SERVICE_ACTIONS } from "./actions.js";
import type { ClusterDependencies } from "./dependencies.js";
import type { PlanCluster } from "./plan-request.js";

export interface PlannedScope {
  readonly services: ReadonlySet<string>;
  /** Indexes of the planned nodes, ascending. */
  readonly nodes: readonly number[];
}

/** @throws BadRequestError for a `service` or `addedServices` the action does not take, or not on the cluster. */
export function plannedScope(request: PlanRequest, cluster: PlanCluster, deps: ClusterDependencies): PlannedScope {
  const { action, serviceNodes } = cluster;
  if (request.service !== undefined && !SINGLE_SERVICE_ACTIONS.has(action)) {
    throw new BadRequestError(`${action} does not take a single service`);
  }
  if (request.addedServices !== undefined && action !== PlanAction.AddServices) {
    throw new BadRequestError(`${action} does not take added services`);
  }
  if (action === PlanAction.AddServices) {
    const services = new Set(request.addedServices ?? []);
    const nodes = new Set<number>();
    for (const name of services) {
      const hosts = serviceNodes.get(name);
      if (!hosts) throw new BadRequestError(`service ${name} is not on the cluster`);
      for (const n of hosts) nodes.add(n);
    }
    return { services, nodes: [...nodes].sort((a, b) => a - b) };
  }
  const nodes = cluster.nodeIds.map((_id, i) => i);
  if (request.service === undefined) return { services: new Set(cluster.clusterServices), nodes };
  const target = request.service;
  if (!serviceNodes.has(target)) throw new BadRequestError(`service ${target} is not on the cluster`);
  const closure = action === PlanAction.StartServices ? deps.closure("runtime", target) : deps.dependents("runtime", target);
  return { services: new Set([target, ...closure]), nodes };
}
