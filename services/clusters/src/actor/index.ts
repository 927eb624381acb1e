import type { EngineDeps } from "../engine/deps.js";
import { DispatchMemory } from "../engine/dispatch-memory.js";
import { createDispatcher, type Dispatcher } from "../engine/dispatcher.js";
import { createClusterActor, type ClusterActor } from "./cluster-actor.js";
import type { AfterWriteHook } from "./durable-actor.js";
import { createEffects, type Effects } from "./effects.js";
import { createPlanActor, type PlanActor } from "./plan-actor.js";

export interface ActorsOptions {
  /** Runs after each actor write, before its actions are carried out (crash tests end the process there). */
  afterWrite?: AfterWriteHook;
}

/**
 * The one place where clusters and plans change state: `clusters.send` / `plans.send` (read, pure transition,
 * compare-and-set, typed actions) and `effects`, which carries the actions out.
 */
export interface Actors {
  clusters: ClusterActor;
  plans: PlanActor;
  effects: Effects;
  dispatcher: Dispatcher;
}

export function createActors(deps: EngineDeps, options: ActorsOptions = {}): Actors {
  const memory = new DispatchMemory();
  const dispatcher = createDispatcher(deps, memory);
  const clusters = createClusterActor(deps.clusters, options.afterWrite);
  const plans = createPlanActor(deps.plans, options.afterWrite);
  return { clusters, plans, dispatcher, effects: createEffects(deps, { clusters, plans, dispatcher, memory }) };
}

export type { ClusterActor, PlanActor, Effects };
export type { PlanRef } from "./plan-actor.js";
export type { PlanEffectOptions } from "./effects.js";
