import type { Identity, JsonObject } from "@corral/contracts";
import type { Solver } from "../adapters/solver.js";
import type { PreparedJob } from "../domain/jobs.js";
import { findVisibleCluster } from "../queries/visible-cluster.js";
import type { OperationContext } from "./context.js";
import { prepareJob } from "./start-job.js";

/** `DELETE /clusters/{id}`: the delete job with the request's provider fields. */
export async function prepareDelete(
  ctx: OperationContext,
  solver: Solver,
  identity: Identity,
  id: string,
  providerFields: JsonObject,
): Promise<PreparedJob> {
  const cluster = await findVisibleCluster(ctx.deps, identity, id);
  return prepareJob(ctx, solver, cluster, { action: "cluster_delete", providerFields });
}
