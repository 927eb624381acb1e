import { validateMacros } from "@corral/solver";
import type { Identity, Json, JsonObject, RollingRequest } from "@corral/contracts";
import type { Solver } from "../adapters/solver.js";
import { findVisibleCluster } from "../queries/visible-cluster.js";
import type { OperationContext } from "./context.js";
import { prepareJob, type PreparedJob } from "./start-job.js";

export interface ConfigureRequest {
  config: JsonObject;
  /** Restart the services after configuring them. */
  restart: boolean;
  /** With `restart`: restart in batches (docs/catalog.md, Rolling restarts); without it the solver answers 400. */
  rolling?: RollingRequest;
  providerFields: JsonObject;
}

/** `PUT /clusters/{id}/config`: the new config is stored in the write that starts the configure job. */
export async function prepareConfigure(
  ctx: OperationContext,
  solver: Solver,
  identity: Identity,
  id: string,
  req: ConfigureRequest,
): Promise<PreparedJob> {
  validateMacros(req.config as Json);
  const cluster = await findVisibleCluster(ctx.deps, identity, id);
  return prepareJob(ctx, solver, cluster, {
    action: req.restart ? "cluster_configure_with_restart" : "cluster_configure",
    changes: { config: req.config },
    providerFields: req.providerFields,
    ...(req.rolling !== undefined ? { rolling: req.rolling } : {}),
  });
}
