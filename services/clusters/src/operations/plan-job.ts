import { planActionOf, type Plan, type PlannedClusterAction, type PlanRequest } from "@corral/contracts";
import type { Solver } from "../adapters/solver.js";
import type { Decision } from "../domain/actors.js";
import type { PlanActorAction } from "../domain/plan-steps.js";
import { INLINE_PLAN_TASKS, type ClusterRecord, type PlanRecord, type StoredTask } from "../domain/records.js";
import type { OperationContext } from "./context.js";

/** Plans a job: the planner's tasks for `action` on the nodes and services of `request`. */
export function planJob(solver: Solver, action: PlannedClusterAction, request: Omit<PlanRequest, "action">): Promise<Plan> {
  return solver.plan({ ...request, action: planActionOf(action) });
}

/**
 * Stores a job's plan actor, not yet reachable from its cluster. Answers the plan with the actions its start
 * decided (publish stage 0, or finish at once when empty), to be carried out once the cluster points at it.
 */
export async function createJobPlan(
  { deps, actors }: OperationContext,
  cluster: Pick<ClusterRecord, "id" | "tenant">,
  planId: string,
  action: PlannedClusterAction,
  plan: Plan,
  extra: Pick<PlanRecord, "nodeServices"> = {},
): Promise<Decision<PlanRecord, PlanActorAction>> {
  const stages: StoredTask[][] = plan.stages.map((stage) =>
    stage.map((t) => ({ taskName: t.taskName, nodeId: t.nodeId, service: t.service })),
  );
  const stageSizes = stages.map((s) => s.length);
  const inline = stageSizes.reduce((a, b) => a + b, 0) <= INLINE_PLAN_TASKS;
  const now = deps.now();
  const created = await actors.plans.create(
    { stageSizes, rollbackConfirm: action === "cluster_create", at: now },
    (actor): PlanRecord => ({
      id: planId,
      clusterId: cluster.id,
      tenant: cluster.tenant,
      action: plan.action,
      createTime: now,
      stageSizes,
      actor,
      ...extra,
      ...(inline ? { tasks: stages } : {}),
    }),
    async (record) => {
      await deps.plans.create(record, stages);
      return true;
    },
  );
  if (!created) throw new Error(`plan ${planId} could not be stored`);
  deps.metrics.planStarted(plan.action);
  // An empty plan ends at its start; every other plan ends in a later write (effects.deliverToPlan).
  for (const a of created.actions) if (a.type === "planFinished") deps.metrics.planFinished(plan.action, a.outcome);
  return created;
}
