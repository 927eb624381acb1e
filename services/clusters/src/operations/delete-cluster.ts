import type { Identity, JsonObject } from "@corral/contracts";
import type { ClusterRecord } from "../domain/records.js";
import { findVisibleCluster, type OperationContext } from "./context.js";
import { requireProviderFields } from "./provider-fields.js";
import { startJob } from "./start-job.js";

/** `DELETE /clusters/{id}`: starts the delete job with the request's provider fields. */
export async function deleteCluster(ctx: OperationContext, identity: Identity, id: string, providerFields: JsonObject): Promise<void> {
  const cluster = await findVisibleCluster(ctx.deps, identity, id);
  await requireProviderFields(ctx.deps.tenancy, cluster.provider, providerFields);
  await startJob(ctx, cluster, { action: "cluster_delete", providerFields });
}

/** A cluster whose lease ended is deleted (by the reconciler), without provider fields. */
export async function expireCluster(ctx: OperationContext, cluster: ClusterRecord): Promise<void> {
  await startJob(ctx, cluster, { action: "cluster_delete" });
}
