import { NotFoundError } from "@corral/contracts";
import type { EndpointHandlers } from "@corral/shared";
import type { PlanRecord } from "../domain/records.js";
import { planView } from "../domain/views.js";
import { clusterFor, type HandlerDeps } from "./context.js";

export function planHandlers(h: HandlerDeps) {
  const view = async (plan: PlanRecord) =>
    planView(plan, await Promise.all(plan.stageSizes.map((_, stage) => h.deps.plans.stageTasks(plan, stage))));
  return {
    "clusters.plans": async (req) => {
      const cluster = await clusterFor(h, req);
      const plans = await Promise.all([...cluster.jobs].reverse().map((id) => h.deps.plans.get(cluster.id, id)));
      return Promise.all(plans.filter((p) => p !== undefined).map((p) => view(p.value)));
    },
    "clusters.plan": async (req) => {
      const cluster = await clusterFor(h, req);
      const planId = req.params["planId"] ?? "";
      const plan = cluster.jobs.includes(planId) ? await h.deps.plans.get(cluster.id, planId) : undefined;
      if (!plan) throw new NotFoundError("plan", planId);
      return view(plan.value);
    },
  } satisfies EndpointHandlers<"clusters">;
}
