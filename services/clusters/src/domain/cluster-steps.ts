import type { AnyStateMachine } from "xstate";
import { ConflictError } from "@corral/contracts";
import { nodeIdFor } from "@corral/solver";
import { accepts, applyEvents, typedActions, type ActorAction, type Decision, type PersistedActor } from "./actors.js";
import type { ClusterContext, ClusterEvent } from "./cluster-machine.js";
import { hasCurrentHead, withHead } from "./cluster-record.js";
import { jobRefusal, leaseRefusal } from "./cluster-status.js";
import { clusterNodeIds, numberingWithout } from "./ids.js";
import { checkLeaseExtension } from "./lease.js";
import type { ClusterRecord } from "./records.js";

/**
 * What events do to a stored cluster: the machine decides status and action; the record around the snapshot
 * follows from the events it took (the plan list, a job's changes, progress, the lease). Pure.
 */

/** What the cluster actor decides for after its write (src/actor/effects.ts carries it out). */
export type ClusterActorAction =
  /** Its nodes leave the tenant's usage and every provider field kept for it goes. */
  { type: "clusterTerminated" };

/** Events of a request that fails (409) unless the cluster takes them; the others are ignored when stale. */
type RequestEvent = Extract<ClusterEvent, { type: "job.started" | "lease.extend" }>;

const isRequestEvent = (event: ClusterEvent): event is RequestEvent => event.type === "job.started" || event.type === "lease.extend";

const refusalOf = (record: ClusterRecord, event: RequestEvent) =>
  event.type === "job.started" ? jobRefusal(record, event.action) : leaseRefusal(record);

/** The record after an event the machine took, with the snapshot it moved to. */
function recordAfter(record: ClusterRecord, event: ClusterEvent, actor: PersistedActor<ClusterContext>): ClusterRecord {
  switch (event.type) {
    case "job.started": {
      const next: ClusterRecord = { ...record, ...event.changes, actor, jobs: [...record.jobs, event.planId] };
      delete next.leavingNodes;
      if (event.leavingNodenums) {
        next.leavingNodes = {
          planId: event.planId,
          nodenums: event.leavingNodenums,
          ...(event.leavingServices?.length ? { services: event.leavingServices } : {}),
        };
      }
      return next;
    }
    case "job.succeeded":
    case "job.failed": {
      const next: ClusterRecord = { ...record, actor, ...(event.steps ? { progress: event.steps } : {}) };
      if (actor.value === "terminated") next.released = true;
      const leaving = record.leavingNodes;
      if (leaving?.planId === event.planId) {
        delete next.leavingNodes;
        // A failed removal keeps its nodes: the cluster is inconsistent and says so.
        if (event.type === "job.succeeded") Object.assign(next, numberingWithout(record, leaving.nodenums), withoutServices(record, leaving.services));
      }
      return next;
    }
    case "lease.extend":
      checkLeaseExtension(record.clusterTemplate, record, event.expireTime, event.at);
      return { ...record, actor, expireTime: event.expireTime };
  }
}

/** The cluster's service list and definitions without `gone` (services whose last node left). */
function withoutServices(record: ClusterRecord, gone: readonly string[] | undefined): Pick<ClusterRecord, "services" | "serviceDefs"> {
  const left = new Set(gone);
  return { services: record.services.filter((s) => !left.has(s)), serviceDefs: record.serviceDefs.filter((d) => !left.has(d.name)) };
}

/**
 * A job that takes nodes off the cluster, prepared from a record in which they were still there: refused (409), so
 * that no request read before a removal or replacement ended removes or replaces the same node again.
 */
function checkLeavingNodes(record: ClusterRecord, event: ClusterEvent): void {
  if (event.type !== "job.started" || !event.leavingNodenums) return;
  const current = new Set(clusterNodeIds(record));
  const gone = event.leavingNodenums.map((n) => nodeIdFor(record.id, n)).filter((id) => !current.has(id));
  if (gone.length > 0) {
    throw new ConflictError(`node ${gone.join(", ")} left cluster ${record.id} since the request read it`, { nodes: gone }, "cluster_changed");
  }
}

/** The typed form of the actions the cluster machine decided. */
export const clusterActionsOf = (actions: readonly ActorAction[]): ClusterActorAction[] =>
  typedActions<ClusterActorAction>("cluster", actions, { clusterTerminated: () => ({ type: "clusterTerminated" }) });

/**
 * Applies events in order to a cluster on `machine` (the machine of its stored version). Throws the 409 of an
 * event that must be taken and is not, or the 400 of a lease extension out of bounds; `undefined` when nothing
 * changes. The record's head follows its actor (`withHead`).
 */
export function clusterStep(
  record: ClusterRecord,
  machine: AnyStateMachine,
  events: readonly ClusterEvent[],
): Decision<ClusterRecord, ClusterActorAction> | undefined {
  let next = record;
  const actions: ClusterActorAction[] = [];
  for (const event of events) {
    const requested = isRequestEvent(event);
    if (requested && !accepts(machine, next.actor, event)) throw refusalOf(next, event);
    checkLeavingNodes(next, event);
    const r = applyEvents<ClusterContext, ClusterEvent>(machine, next.actor, [event]);
    if (!requested && !r.changed) continue;
    next = recordAfter(next, event, r.persisted);
    actions.push(...clusterActionsOf(r.actions));
  }
  if (next !== record) return { record: withHead(next), actions };
  // Nothing changed but a head behind its actor (a record written before heads had a status): written anew.
  return hasCurrentHead(record) ? undefined : { record: withHead(record), actions: [] };
}
