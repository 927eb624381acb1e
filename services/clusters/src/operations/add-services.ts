import { BadRequestError, type Identity, type JsonObject, type Service } from "@corral/contracts";
import type { Solver } from "../adapters/solver.js";
import { clusterNodeIds } from "../domain/ids.js";
import { nodeTypesOf } from "../domain/node-types.js";
import type { ClusterRecord } from "../domain/records.js";
import { findVisibleCluster } from "../queries/visible-cluster.js";
import type { OperationContext } from "./context.js";
import { prepareJob, type PreparedJob } from "./start-job.js";

export interface AddServicesRequest {
  services: string[];
  providerFields: JsonObject;
}

/** Each service must exist in the catalog, fit the cluster's template and not be on the cluster yet (400). */
function checkAddable(cluster: ClusterRecord, catalogServices: readonly Service[], services: readonly string[]): void {
  const compatible = cluster.clusterTemplate.compatibility.services;
  for (const name of services) {
    if (!catalogServices.some((d) => d.name === name)) throw new BadRequestError(`service ${name} does not exist`, { field: "services" });
    if (compatible.length > 0 && !compatible.includes(name)) {
      throw new BadRequestError(`service ${name} is not compatible with template ${cluster.clusterTemplate.name}`, { field: "services" });
    }
    if (cluster.services.includes(name)) {
      throw new BadRequestError(`service ${name} is already on cluster ${cluster.id}`, { field: "services" });
    }
  }
}

/**
 * `POST /clusters/{id}/services`: places the services without moving anything (`solver`) and plans the
 * add_services job; the cluster's services and their definitions change in the write that starts it.
 */
export async function prepareAddServices(
  ctx: OperationContext,
  solver: Solver,
  identity: Identity,
  id: string,
  req: AddServicesRequest,
): Promise<PreparedJob> {
  const { deps } = ctx;
  const cluster = await findVisibleCluster(deps, identity, id);
  const catalog = await deps.tenancy.catalog(cluster.tenant);
  checkAddable(cluster, catalog.services, req.services);
  // The cluster's own definitions, with the added services' current ones (docs/decisions.md, A cluster keeps the
  // definitions it was created with).
  const defs = new Map<string, Service>(cluster.serviceDefs.map((d) => [d.name, d]));
  for (const name of req.services) {
    const def = catalog.services.find((d) => d.name === name);
    if (def) defs.set(name, def);
  }
  const nodes = await deps.nodes.getMany(cluster.id, clusterNodeIds(cluster));
  const result = await solver.addServices({
    template: cluster.clusterTemplate,
    catalog: { services: [...defs.values()] },
    nodes: nodes.map((n) => ({ id: n.id, nodenum: n.nodenum, services: n.services, ...nodeTypesOf(n) })),
    clusterServices: cluster.services,
    services: req.services,
  });
  const serviceDefs = result.services.map((name) => defs.get(name)).filter((d): d is Service => d !== undefined);
  return prepareJob(ctx, solver, cluster, {
    action: "add_services",
    addedServices: req.services,
    nodeServices: Object.fromEntries(result.changedNodes.map((n) => [n.id, n.services])),
    changes: { services: result.services, serviceDefs },
    providerFields: req.providerFields,
  });
}
