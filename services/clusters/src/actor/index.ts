import type { EngineDeps } from "../adapters/deps.js";
import { createClusterActor, type ClusterActor } from "./cluster-actor.js";
import { DispatchMemory } from "./dispatch-memory.js";
import { createDispatcher, type Dispatcher } from "./dispatcher.js";
import type { AfterWriteHook } from "./durable-actor.js";
import { createEffects, type Effects } from "./effects.js";
import { eraseCluster } from "./erase.js";
import { createJobs, type Jobs } from "./jobs.js";
import { createPlanActor, type PlanActor } from "./plan-actor.js";

export interface ActorsOptions {
  /** Runs after each actor write, before its actions are carried out (crash tests end the process there). */
  afterWrite?: AfterWriteHook;
}

/**
 * The one place where cluster and plan records are written: `clusters.send` / `plans.send` (read, pure transition,
 * compare-and-set, typed actions), `effects`, which carries the actions out, `jobs`, which creates clusters and
 * starts jobs, and `eraseCluster` (a deleted tenant's clusters).
 */
export interface Actors {
  clusters: ClusterActor;
  plans: PlanActor;
  effects: Effects;
  jobs: Jobs;
  dispatcher: Dispatcher;
  eraseCluster(clusterId: string): Promise<void>;
}

export function createActors(deps: EngineDeps, options: ActorsOptions = {}): Actors {
  const memory = new DispatchMemory();
  const dispatcher = createDispatcher(deps, memory);
  const clusters = createClusterActor(deps.clusters, options.afterWrite);
  const plans = createPlanActor(deps.plans, options.afterWrite);
  const effects = createEffects(deps, { clusters, plans, dispatcher, memory });
  return {
    clusters,
    plans,
    dispatcher,
    effects,
    jobs: createJobs(deps, { clusters, plans, effects }),
    eraseCluster: (clusterId) => eraseCluster(deps, clusterId),
  };
}

export type { ClusterActor, PlanActor, Effects, Jobs };
export type { PlanEffectOptions } from "./effects.js";
