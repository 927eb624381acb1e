import type { PlanStore } from "../adapters/plan-store.js";
import { planMachines, type PlanContext, type PlanEvent } from "../domain/plan-machine.js";
import { planActionsOf, planStep, type PlanActorAction } from "../domain/plan-steps.js";
import type { PlanRecord, PlanRef } from "../domain/records.js";
import { createDurableActor, type AfterWriteHook, type DurableActor } from "./durable-actor.js";

/** The plan actors. */
export type PlanActor = DurableActor<PlanRef, PlanRecord, PlanEvent, PlanActorAction, PlanContext>;

export function createPlanActor(store: PlanStore, afterWrite?: AfterWriteHook): PlanActor {
  return createDurableActor(
    { machines: planMachines, actorOf: (p: PlanRecord) => p.actor, step: planStep, actionsOf: planActionsOf },
    { modify: (ref: PlanRef, fn) => store.modify(ref.clusterId, ref.planId, fn) },
    afterWrite,
  );
}
