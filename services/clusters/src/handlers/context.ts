import type { ApiRequest, DryRunResult, QueryValues } from "@corral/contracts";
import { parseDryRun } from "../domain/requests.js";
import type { ClusterOperations, JobOperations } from "../operations/index.js";
import type { ClusterQueries } from "../queries/index.js";

/** What the cluster handlers delegate to: the queries that read clusters, the operations that change them. */
export interface HandlerDeps {
  operations: ClusterOperations;
  queries: ClusterQueries;
}

/** The id in the request's path. */
export const clusterIdOf = (req: ApiRequest) => req.params["id"] ?? "";

/** The job operations a request asks for: carried out, or with `?dryRun=true` answered instead. */
export function jobOperationsFor(h: HandlerDeps, req: ApiRequest<unknown, QueryValues<"dryRun">>): JobOperations<void | DryRunResult> {
  return parseDryRun(req.query) ? h.operations.dryRun : h.operations;
}
