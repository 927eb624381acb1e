/**
 * Deterministic task numbering for a plan (the caller owns ids; this only gives it a stable scheme).
 */
import type { PlanAction } from "./actions.js";
import type { Plan, PlannedTask } from "@corral/contracts";

/** A planned task with its id. */
export interface NumberedTask extends PlannedTask {
  readonly id: string;
}

/** A plan whose tasks carry ids. */
export interface NumberedPlan {
  readonly action: PlanAction;
  readonly stages: NumberedTask[][];
}

/** Options of {@link numberTasks}. */
export interface NumberTasksOptions {
  /** Put before each number, joined with `-` (for example the plan id). Empty: bare numbers. @default "" */
  readonly prefix?: string;
  /** Number of the first task. @default 1 */
  readonly first?: number;
}

/**
 * Gives every task an id: `<prefix>-<n>`, n counting from `first` in stage order, then task order within the
 * stage. The same plan always gets the same ids. The input plan is not modified.
 * @example numberTasks(plan, { prefix: "plan7" }).stages[0][0].id // "plan7-1"
 */
export function numberTasks(plan: Plan, options: NumberTasksOptions = {}): NumberedPlan {
  const prefix = options.prefix ?? "";
  let n = options.first ?? 1;
  const stages = plan.stages.map((stage) =>
    stage.map((task) => ({ ...task, id: prefix === "" ? String(n++) : `${prefix}-${n++}` })),
  );
  return { action: plan.action, stages };
}
