import type { ApiRequest, Identity } from "@corral/shared";
import type { ClusterRecord, PlanRecord } from "../domain/records.js";
import { progressOf, type Progress } from "../domain/views.js";
import type { EngineDeps } from "../engine/deps.js";
import { visibleCluster, type Engine } from "../engine/engine.js";

/** What every cluster handler needs. */
export interface HandlerDeps {
  deps: EngineDeps;
  engine: Engine;
}

/** The cluster named in the path, if the caller may see it (404 otherwise). */
export async function clusterFor(h: HandlerDeps, req: ApiRequest): Promise<ClusterRecord> {
  const id = req.params["id"] ?? "";
  return visibleCluster((await h.deps.clusters.get(id))?.value, req.identity, id);
}

/** The cluster's current plan (for live progress). */
export async function currentPlan(h: HandlerDeps, cluster: ClusterRecord): Promise<PlanRecord | undefined> {
  return (await h.deps.plans.get(cluster.id, cluster.actor.context.planId))?.value;
}

export async function liveProgress(h: HandlerDeps, cluster: ClusterRecord): Promise<Progress> {
  const plan = cluster.actor.value === "pending" ? await currentPlan(h, cluster) : undefined;
  return progressOf(cluster, plan);
}

export type { Identity };
