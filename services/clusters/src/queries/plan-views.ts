import { NotFoundError, type Identity, type PlanView } from "@corral/contracts";
import type { PlanRecord } from "../domain/records.js";
import { planView } from "../domain/views.js";
import type { ReadingDeps } from "../adapters/deps.js";
import { findVisibleCluster } from "./visible-cluster.js";

async function viewOf(deps: ReadingDeps, plan: PlanRecord): Promise<PlanView> {
  return planView(plan, await Promise.all(plan.stageSizes.map((_, stage) => deps.plans.stageTasks(plan, stage))));
}

/** `GET /clusters/{id}/plans`: every job's plan, newest first. */
export async function plansOf(deps: ReadingDeps, identity: Identity, id: string): Promise<PlanView[]> {
  const cluster = await findVisibleCluster(deps, identity, id);
  const plans = await Promise.all([...cluster.jobs].reverse().map((planId) => deps.plans.get(cluster.id, planId)));
  return Promise.all(plans.filter((p) => p !== undefined).map((p) => viewOf(deps, p.value)));
}

/** `GET /clusters/{id}/plans/{planId}`: one of the cluster's plans (404 for another cluster's). */
export async function planOf(deps: ReadingDeps, identity: Identity, id: string, planId: string): Promise<PlanView> {
  const cluster = await findVisibleCluster(deps, identity, id);
  const plan = cluster.jobs.includes(planId) ? await deps.plans.get(cluster.id, planId) : undefined;
  if (!plan) throw new NotFoundError("plan", planId);
  return viewOf(deps, plan.value);
}
