import type { AnyStateMachine } from "xstate";
import { applyEvents, typedActions, type ActorAction, type Decision } from "./actors.js";
import { isPlanEnded, stagePositionOf, type Dispatch, type PlanContext, type PlanEvent } from "./plan-machine.js";
import type { PlanRecord } from "./records.js";

/** How a plan ended. */
export type PlanOutcome = "succeeded" | "failed";

/** What the plan actor decides for after its write (src/actor/effects.ts carries it out). */
export type PlanActorAction =
  | { type: "publishStage"; stage: number }
  | { type: "publishTasks"; tasks: Dispatch[] }
  | { type: "planFinished"; outcome: PlanOutcome };

/** The typed form of the actions the plan machine decided. */
export const planActionsOf = (actions: readonly ActorAction[]): PlanActorAction[] =>
  typedActions<PlanActorAction>("plan", actions, {
    publishStage: (p) => ({ type: "publishStage", stage: p["stage"] as number }),
    publishTasks: (p) => ({ type: "publishTasks", tasks: p["tasks"] as Dispatch[] }),
    planFinished: (p) => ({ type: "planFinished", outcome: p["outcome"] as PlanOutcome }),
  });

/**
 * Applies events in order to a plan on `machine` (the machine of its stored version). Results are counted in
 * `resultsApplied` even when stale, while the plan runs: the count tells whether nodes changed (see
 * engine/dispatch-memory.ts). `undefined` when nothing changes.
 */
export function planStep(
  record: PlanRecord,
  machine: AnyStateMachine,
  events: readonly PlanEvent[],
): Decision<PlanRecord, PlanActorAction> | undefined {
  const results = events.filter((e) => e.type === "task.result").length;
  const r = applyEvents<PlanContext, PlanEvent>(machine, record.actor, events);
  const running = !isPlanEnded(record.actor);
  if (!r.changed && !(running && results > 0)) return undefined;
  const resultsApplied = (record.resultsApplied ?? 0) + (running ? results : 0);
  return { record: { ...record, actor: r.persisted, resultsApplied }, actions: planActionsOf(r.actions) };
}

/**
 * The actions a stored plan still owes, re-derived after a crash: its decided but unconfirmed publications, or
 * the end of its job once it has finished.
 */
export function pendingPlanActions(plan: PlanRecord): PlanActorAction[] {
  if (isPlanEnded(plan.actor)) return [{ type: "planFinished", outcome: plan.actor.value }];
  const unpublished = plan.actor.context.unpublished;
  if (!unpublished) return [];
  const stages = unpublished.stages.map((stage): PlanActorAction => ({ type: "publishStage", stage }));
  return unpublished.tasks.length > 0 ? [...stages, { type: "publishTasks", tasks: unpublished.tasks }] : stages;
}

/** Whether a stored plan has ended (succeeded or failed). */
export const hasPlanEnded = (plan: Pick<PlanRecord, "actor">): boolean => isPlanEnded(plan.actor);

/** Since when (ms) the plan has dispatches decided and not confirmed published; undefined when it has none. */
export const unpublishedSince = (plan: Pick<PlanRecord, "actor">): number | undefined => plan.actor.context.unpublished?.since;

/** The stage of the plan's task at global `index`, and its position in that stage. */
export const taskPositionOf = (plan: Pick<PlanRecord, "actor">, index: number) => stagePositionOf(plan.actor.context, index);

/** The global index of the first task of `stage`. */
export const stageStartOf = (plan: Pick<PlanRecord, "actor">, stage: number): number => plan.actor.context.stageStarts[stage] ?? 0;

/** Total and completed tasks of a plan. */
export const stepsOf = (plan: PlanRecord) => ({
  stepstotal: plan.stageSizes.reduce((a, b) => a + b, 0),
  stepscompleted: plan.actor.context.completed,
});
