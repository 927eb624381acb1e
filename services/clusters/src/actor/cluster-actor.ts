import type { ClusterStore } from "../adapters/cluster-store.js";
import { clusterMachines, type ClusterContext, type ClusterEvent } from "../domain/cluster-machine.js";
import { clusterActionsOf, clusterStep, type ClusterActorAction } from "../domain/cluster-steps.js";
import type { ClusterRecord } from "../domain/records.js";
import { createDurableActor, type AfterWriteHook, type DurableActor } from "./durable-actor.js";

/** The cluster actors, by cluster id. */
export type ClusterActor = DurableActor<string, ClusterRecord, ClusterEvent, ClusterActorAction, ClusterContext>;

export function createClusterActor(store: ClusterStore, afterWrite?: AfterWriteHook): ClusterActor {
  return createDurableActor(
    { machines: clusterMachines, actorOf: (c: ClusterRecord) => c.actor, step: clusterStep, actionsOf: clusterActionsOf },
    { modify: (id: string, fn) => store.modify(id, fn) },
    afterWrite,
  );
}
