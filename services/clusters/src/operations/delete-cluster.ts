import type { Identity, JsonObject } from "@corral/contracts";
import { librarySolver, type Solver } from "../adapters/solver.js";
import type { ClusterRecord } from "../domain/records.js";
import { findVisibleCluster } from "../queries/visible-cluster.js";
import type { OperationContext } from "./context.js";
import { prepareJob, startJob, type PreparedJob } from "./start-job.js";

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

/** A cluster whose lease ended is deleted (by the reconciler), without provider fields. */
export async function expireCluster(ctx: OperationContext, cluster: ClusterRecord): Promise<void> {
  await startJob(ctx, await prepareJob(ctx, librarySolver, cluster, { action: "cluster_delete" }));
}
