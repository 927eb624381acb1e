import type { TaskEndedEvent } from "@corral/contracts";
import type { EngineDeps } from "../adapters/deps.js";
import type { ClusterEvent } from "../domain/cluster-machine.js";
import type { ClusterActorAction } from "../domain/cluster-steps.js";
import type { PlanEvent } from "../domain/plan-machine.js";
import { stepsOf, type PlanActorAction } from "../domain/plan-steps.js";
import type { ClusterRecord, PlanRecord, PlanRef } from "../domain/records.js";
import { clusterChangeEvents, planFinishedEvent, planWriteEvents, stageStartedEvent } from "../domain/stream-events.js";
import type { ClusterActor } from "./cluster-actor.js";
import type { DispatchMemory } from "./dispatch-memory.js";
import type { Dispatcher, KnownState } from "./dispatcher.js";
import type { PlanActor } from "./plan-actor.js";
import { createPublishedMarks } from "./published-marks.js";

export interface PlanEffectOptions {
  /** State the caller has just written (a new cluster): publishing needs not read it back. */
  known?: KnownState;
  /** Carried out again from stored state (the reconciler): everything is read afresh, tasks are marked republished. */
  republish?: boolean;
  /** The write's stage and end events are published already (`planWriteEvents`, with its progress). */
  announced?: boolean;
}

/**
 * Carries out what the actors decided, after their write: publishes tasks, ends a finished plan's job, releases a
 * terminated cluster's usage and provider fields. Every action is idempotent (task message ids, purges) and
 * re-derivable from stored state, so a crash between a write and its effects is repaired by the reconciler.
 */
export interface Effects {
  ofPlan(plan: PlanRecord, actions: readonly PlanActorAction[], options?: PlanEffectOptions): Promise<void>;
  /** `previous`: the record before this write (absent: a new cluster); its status and lease changes are announced. */
  ofCluster(cluster: ClusterRecord, actions: readonly ClusterActorAction[], previous?: ClusterRecord): Promise<void>;
  /**
   * Sends events to a plan, then carries out what it decided (and what that leads to). `ended`: the `task.ended`
   * events of the successful results among `events`, announced with the write (see `planWriteEvents`).
   */
  deliverToPlan(ref: PlanRef, events: readonly PlanEvent[], ended?: readonly TaskEndedEvent[]): Promise<void>;
  /** Sends events to a cluster, then carries out what it decided. Answers the record when it changed. */
  deliverToCluster(clusterId: string, events: readonly ClusterEvent[]): Promise<ClusterRecord | undefined>;
  /** Writes the publication marks still waiting for their plans' next writes (a stopping service). */
  flushPublishedMarks(): Promise<void>;
}

export interface EffectsParts {
  clusters: ClusterActor;
  plans: PlanActor;
  dispatcher: Dispatcher;
  memory: DispatchMemory;
}

const refOf = (plan: PlanRecord): PlanRef => ({ clusterId: plan.clusterId, planId: plan.id });

export function createEffects(deps: EngineDeps, { clusters, plans, dispatcher, memory }: EffectsParts): Effects {
  const marks = createPublishedMarks((ref) => effects.deliverToPlan(ref, []), deps.log);
  const effects: Effects = {
    async ofPlan(plan, actions, options = {}) {
      const dispatches = actions.flatMap((a) => (a.type === "publishTasks" ? a.tasks : []));
      const stages = actions.flatMap((a) => (a.type === "publishStage" ? [a.stage] : []));
      if (!options.announced) deps.publisher.publishClusterEvents(stages.map((stage) => stageStartedEvent(plan, stage, deps.now())));
      if (dispatches.length > 0 || stages.length > 0) {
        const events = await dispatcher.publish(plan, dispatches, stages, {
          ...(options.known ? { known: options.known } : {}),
          ...(options.republish ? { republish: true } : {}),
        });
        const [mark, ...failures] = events;
        // A live publication's mark waits for the plan's next write; a republish (the reconciler) writes it at once.
        if (mark?.type === "dispatch.published" && failures.length === 0 && !options.republish) marks.add(refOf(plan), mark);
        else if (events.length > 0) await effects.deliverToPlan(refOf(plan), events);
      }
      for (const a of actions) {
        if (a.type !== "planFinished") continue;
        // A plan this process knows ran without provider fields stored none (the store writes nothing for none).
        const known = memory.get(plan);
        memory.forget(plan);
        // No task of the plan runs any more: its provider fields go (a crash here leaves them to the reconciler).
        if (!known || Object.keys(known.credentials).length > 0) await deps.credentials.purge(plan.clusterId, plan.id);
        if (!options.announced) deps.publisher.publishClusterEvents([planFinishedEvent(plan, a.outcome, deps.now())]);
        const event: ClusterEvent =
          a.outcome === "succeeded"
            ? { type: "job.succeeded", planId: plan.id, steps: stepsOf(plan) }
            : { type: "job.failed", planId: plan.id, steps: stepsOf(plan) };
        await effects.deliverToCluster(plan.clusterId, [event]);
      }
    },

    async ofCluster(cluster, actions, previous) {
      deps.publisher.publishClusterEvents(clusterChangeEvents(previous, cluster, deps.now()));
      // Nodes a live cluster lost leave the tenant's usage (after the write, as below).
      const lost = previous && !cluster.released ? previous.numNodes - cluster.numNodes : 0;
      if (lost > 0) await deps.usage.releaseNodes(cluster.tenant, lost);
      for (const a of actions) {
        if (a.type !== "clusterTerminated") continue;
        // After the write, so a crash can at worst leak a reservation, which the usage recount repairs.
        await deps.usage.release(cluster.tenant, cluster.numNodes);
        await deps.credentials.wipe(cluster.id);
      }
    },

    async deliverToPlan(ref, events, ended = []) {
      const held = marks.take(ref);
      if (held.length === 0 && events.length === 0) return deps.publisher.publishClusterEvents(ended);
      let sent: Awaited<ReturnType<PlanActor["send"]>>;
      try {
        sent = await plans.send(ref, held.length > 0 ? [...held, ...events] : events);
      } catch (err) {
        for (const mark of held) marks.add(ref, mark);
        throw err;
      }
      if (!sent) return deps.publisher.publishClusterEvents(ended);
      memory.resultsApplied(sent.record, sent.previous.resultsApplied ?? 0, sent.record.resultsApplied ?? 0);
      for (const a of sent.actions) if (a.type === "planFinished") deps.metrics.planFinished(sent.record.action, a.outcome);
      deps.publisher.publishClusterEvents(planWriteEvents(sent.previous, sent.record, sent.actions, deps.now(), ended));
      await effects.ofPlan(sent.record, sent.actions, { announced: true });
    },

    async deliverToCluster(clusterId, events) {
      const sent = await clusters.send(clusterId, events);
      if (!sent) return undefined;
      await effects.ofCluster(sent.record, sent.actions, sent.previous);
      return sent.record;
    },

    flushPublishedMarks: () => marks.flushAll(),
  };
  return effects;
}
