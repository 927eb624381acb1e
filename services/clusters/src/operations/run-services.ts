import { NotFoundError, type Identity, type JsonObject, type RollingRequest } from "@corral/contracts";
import type { Solver } from "../adapters/solver.js";
import { findVisibleCluster } from "../queries/visible-cluster.js";
import type { OperationContext } from "./context.js";
import { prepareJob, type PreparedJob } from "./start-job.js";

export type ServicesAction = "start_services" | "stop_services" | "restart_services";

/**
 * Start, stop or restart every service of a cluster, or `service` alone (which must be on the cluster: 404). A
 * restart with `rolling` restarts the nodes in batches (docs/catalog.md, Rolling restarts; the solver answers 400
 * when the template's quantities.min lets no node of a service stop).
 */
export async function prepareRunServices(
  ctx: OperationContext,
  solver: Solver,
  identity: Identity,
  id: string,
  action: ServicesAction,
  service: string | undefined,
  providerFields: JsonObject,
  rolling?: RollingRequest,
): Promise<PreparedJob> {
  const cluster = await findVisibleCluster(ctx.deps, identity, id);
  if (service !== undefined && !cluster.services.includes(service)) {
    throw new NotFoundError(`service ${service} on cluster`, cluster.id);
  }
  return prepareJob(ctx, solver, cluster, {
    action,
    providerFields,
    ...(service !== undefined ? { service } : {}),
    ...(rolling !== undefined ? { rolling } : {}),
  });
}
