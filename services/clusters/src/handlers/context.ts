import type { ApiRequest, DryRunResult } from "@corral/contracts";
import type { ClusterRecord, PlanRecord } from "../domain/records.js";
import { parseDryRun } from "../domain/requests.js";
import { progressOf, type Progress } from "../domain/views.js";
import type { EngineDeps } from "../engine/deps.js";
import { findVisibleCluster, type ClusterOperations, type JobOperations } from "../operations/index.js";

/** What every cluster handler needs: stores to read from, and the operations that change clusters. */
export interface HandlerDeps {
  deps: EngineDeps;
  operations: ClusterOperations;
}

/** The id in the request's path. */
export const clusterIdOf = (req: ApiRequest) => req.params["id"] ?? "";

/** The job operations a request asks for: carried out, or with `?dryRun=true` answered instead. */
export function jobOperationsFor(h: HandlerDeps, req: ApiRequest): JobOperations<void | DryRunResult> {
  return parseDryRun(req.query) ? h.operations.dryRun : h.operations;
}

/** The cluster named in the path, if the caller may see it (404 otherwise). */
export async function clusterFor(h: HandlerDeps, req: ApiRequest): Promise<ClusterRecord> {
  return findVisibleCluster(h.deps, req.identity, clusterIdOf(req));
}

/** The cluster's current plan (for live progress). */
export async function currentPlan(h: HandlerDeps, cluster: ClusterRecord): Promise<PlanRecord | undefined> {
  return (await h.deps.plans.get(cluster.id, cluster.actor.context.planId))?.value;
}

export async function liveProgress(h: HandlerDeps, cluster: ClusterRecord): Promise<Progress> {
  const plan = cluster.actor.value === "pending" ? await currentPlan(h, cluster) : undefined;
  return progressOf(cluster, plan);
}
