import { validateMacros } from "@corral/solver";
import type { Identity, Json, JsonObject } from "@corral/contracts";
import { findVisibleCluster, type OperationContext } from "./context.js";
import { requireProviderFields } from "./provider-fields.js";
import { startJob } from "./start-job.js";

export interface ConfigureRequest {
  config: JsonObject;
  /** Restart the services after configuring them. */
  restart: boolean;
  providerFields: JsonObject;
}

/** `PUT /clusters/{id}/config`: the new config is stored in the write that starts the configure job. */
export async function configureCluster(ctx: OperationContext, identity: Identity, id: string, req: ConfigureRequest): Promise<void> {
  validateMacros(req.config as Json);
  const cluster = await findVisibleCluster(ctx.deps, identity, id);
  await requireProviderFields(ctx.deps.tenancy, cluster.provider, req.providerFields);
  await startJob(ctx, cluster, {
    action: req.restart ? "cluster_configure_with_restart" : "cluster_configure",
    changes: { config: req.config },
    providerFields: req.providerFields,
  });
}
