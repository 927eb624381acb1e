import type { DryRunResult, JobStarted } from "@corral/contracts";
import type { ClusterOperations, JobOperations } from "../operations/index.js";
import type { ClusterQueries } from "../queries/index.js";

/** What the cluster handlers delegate to: the queries that read clusters, the operations that change them. */
export interface HandlerDeps {
  operations: ClusterOperations;
  queries: ClusterQueries;
}

/** The id in the request's path. */
export const clusterIdOf = (req: { params: { id?: string } }) => req.params.id ?? "";

/** The job operations a request asks for: carried out, or with `?dryRun=true` answered instead. */
export function jobOperationsFor(h: HandlerDeps, req: { query: { dryRun?: boolean } }): JobOperations<JobStarted | DryRunResult> {
  return req.query.dryRun ? h.operations.dryRun : h.operations;
}
