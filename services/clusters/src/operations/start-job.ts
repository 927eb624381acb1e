import type { Solver } from "../adapters/solver.js";
import type { JobRequest, PreparedJob } from "../domain/jobs.js";
import type { ClusterRecord } from "../domain/records.js";
import type { OperationContext } from "./context.js";
import { checkProviderFields } from "./provider-fields.js";

/**
 * The checks and the plan of a job on a cluster, with `solver`: 400 when the request's provider fields are missing
 * or not the user's to give, 409 when the cluster is busy or in the wrong state. Writes nothing.
 */
export async function prepareJob(ctx: OperationContext, solver: Solver, cluster: ClusterRecord, request: JobRequest): Promise<PreparedJob> {
  if (request.providerFields !== undefined) await checkProviderFields(ctx.deps.tenancy, cluster.provider, request.providerFields);
  return ctx.actors.jobs.prepare(solver, cluster, request);
}

export type { JobRequest, PreparedJob };
