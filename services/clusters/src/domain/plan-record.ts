import type { Plan, PlannedClusterAction } from "@corral/contracts";
import type { PersistedActor } from "./actors.js";
import type { PlanContext, PlanInput } from "./plan-machine.js";
import { INLINE_PLAN_TASKS, type ClusterRecord, type PlanRecord, type StoredTask } from "./records.js";

/** A job's plan as the planner made it, and whose it is. */
export interface NewPlan {
  id: string;
  cluster: Pick<ClusterRecord, "id" | "tenant">;
  action: PlannedClusterAction;
  plan: Plan;
  /** ms */
  createTime: number;
  /** For add_services: the services each changed node holds after the change. */
  nodeServices?: Record<string, string[]>;
  /** The user whose request started it. */
  startedBy?: string;
}

/** What a new plan actor starts from: its input, its tasks by stage (to store), its record around its first snapshot. */
export interface PlanStart {
  input: PlanInput;
  stages: StoredTask[][];
  recordOf(actor: PersistedActor<PlanContext>): PlanRecord;
}

export function newPlan({ id, cluster, action, plan, createTime, nodeServices, startedBy }: NewPlan): PlanStart {
  const stages: StoredTask[][] = plan.stages.map((stage) =>
    stage.map((t) => ({ taskName: t.taskName, nodeId: t.nodeId, service: t.service })),
  );
  const stageSizes = stages.map((s) => s.length);
  const inline = stageSizes.reduce((a, b) => a + b, 0) <= INLINE_PLAN_TASKS;
  return {
    input: { stageSizes, rollbackConfirm: action === "cluster_create", at: createTime },
    stages,
    recordOf: (actor) => ({
      id,
      clusterId: cluster.id,
      tenant: cluster.tenant,
      action: plan.action,
      createTime,
      ...(startedBy !== undefined ? { startedBy } : {}),
      stageSizes,
      actor,
      ...(nodeServices ? { nodeServices } : {}),
      ...(inline ? { tasks: stages } : {}),
    }),
  };
}
