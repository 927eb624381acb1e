import {
  OUTPUT_TAIL_CHARS,
  type ClusterStatusEvent,
  type ClusterStreamEvent,
  type LeaseChangedEvent,
  type PlanFinishedEvent,
  type PlanProgressEvent,
  type PlanStageEvent,
  type TaskEndedEvent,
  type TaskStartedEvent,
  type TaskMessage,
  type TaskResult,
} from "@corral/contracts";
import { statusOf } from "./cluster-status.js";
import { formatTaskId } from "./ids.js";
import type { PlanActorAction, PlanOutcome } from "./plan-steps.js";
import type { ClusterRecord, PlanRecord } from "./records.js";

/**
 * The cluster events (contracts/src/cluster-events.ts) that state changes make, built from what was written.
 * Pure: the effects, the dispatcher's publisher and the results consumer publish what these answer.
 */

/** A cluster's status and lease changes between two of its records (`previous` absent: a new cluster). */
export function clusterChangeEvents(previous: ClusterRecord | undefined, next: ClusterRecord, at: number): ClusterStreamEvent[] {
  const events: ClusterStreamEvent[] = [];
  const base = { tenant: next.tenant, clusterId: next.id, at };
  const status = statusOf(next);
  const before = previous ? statusOf(previous) : undefined;
  if (status !== before || next.actor.context.planId !== previous?.actor.context.planId) {
    const event: ClusterStatusEvent = {
      ...base,
      type: "cluster.status",
      status,
      action: next.actor.context.action,
      planId: next.actor.context.planId,
      progress: next.progress,
    };
    if (before !== undefined) event.previous = before;
    events.push(event);
  }
  if (previous && previous.expireTime !== next.expireTime) {
    const lease: LeaseChangedEvent = { ...base, type: "lease.changed", expireTime: next.expireTime, previousExpireTime: previous.expireTime };
    events.push(lease);
  }
  return events;
}

const planBase = (plan: PlanRecord, at: number) => ({ tenant: plan.tenant, clusterId: plan.clusterId, at, planId: plan.id });
const totalOf = (plan: PlanRecord) => plan.stageSizes.reduce((a, b) => a + b, 0);

/** A stage of `plan` starting. */
export function stageStartedEvent(plan: PlanRecord, stage: number, at: number): PlanStageEvent {
  return {
    ...planBase(plan, at),
    type: "plan.stage",
    action: plan.action,
    stage,
    stages: plan.stageSizes.length,
    tasks: plan.stageSizes[stage] ?? 0,
  };
}

/**
 * The events of one write of a plan: its progress when its completed task count changed, the stages it started
 * and its end. `ended`: the `task.ended` events of the successful results the write was given.
 *
 * When there is a progress, the rest rides inside it (`then`), and so do those task ends when the write completed
 * exactly that many tasks, so that it recorded each of them (`tasksEnded`): one stored message, whose message id
 * follows the plan's count, so a repeat is dropped. Otherwise (some were recorded by an earlier delivery, whose
 * events may or may not have been stored before a crash; a rollback step) each task end is published on its own,
 * under its own message id: announced at least once. So is a stage or end the reconciler carries out again after a
 * crash (`Effects.ofPlan`).
 */
export function planWriteEvents(
  previous: PlanRecord,
  next: PlanRecord,
  actions: readonly PlanActorAction[],
  at: number,
  ended: readonly TaskEndedEvent[] = [],
): ClusterStreamEvent[] {
  const then = actions.flatMap((a): Array<PlanStageEvent | PlanFinishedEvent> =>
    a.type === "publishStage" ? [stageStartedEvent(next, a.stage, at)] : a.type === "planFinished" ? [planFinishedEvent(next, a.outcome, at)] : [],
  );
  const completed = next.actor.context.completed;
  const recorded = completed - previous.actor.context.completed;
  if (recorded === 0) return [...ended, ...then];
  const progress: PlanProgressEvent = { ...planBase(next, at), type: "plan.progress", stage: next.actor.context.stage, stepscompleted: completed, stepstotal: totalOf(next) };
  if (then.length > 0) progress.then = then;
  if (ended.length === 0) return [progress];
  if (recorded === ended.length) return [{ ...progress, tasksEnded: [...ended] }];
  return [...ended, progress];
}

/** The end of a plan, with what failed. */
export function planFinishedEvent(plan: PlanRecord, outcome: PlanOutcome, at: number): PlanFinishedEvent {
  const event: PlanFinishedEvent = {
    ...planBase(plan, at),
    type: "plan.finished",
    action: plan.action,
    outcome,
    ...(plan.startedBy !== undefined ? { startedBy: plan.startedBy } : {}),
  };
  const failure = plan.actor.context.failure;
  if (outcome === "failed" && failure) {
    // A small plan keeps its tasks in its record: the failed one's node and service come with it.
    const task = plan.tasks?.flat()[failure.index];
    event.failure = {
      taskId: formatTaskId(plan.id, failure.index),
      taskName: failure.taskName,
      message: failure.message,
      ...(task ? { nodeId: task.nodeId, service: task.service } : {}),
    };
  }
  return event;
}

/**
 * The `task.started` events of dispatches published: retries and rollback steps only. A first dispatch (1) is
 * announced by its stage's `plan.stage` (a stage's tasks are all dispatched with it), which saves the events
 * stream one stored message per task.
 */
export function taskStartedEvents(messages: readonly TaskMessage[]): TaskStartedEvent[] {
  return messages.filter((m) => m.dispatch > 1).map(taskStartedEvent);
}

function taskStartedEvent(m: TaskMessage): TaskStartedEvent {
  return {
    type: "task.started",
    tenant: m.tenant,
    clusterId: m.clusterId,
    at: m.submitTime,
    planId: m.planId,
    taskId: m.taskId,
    taskName: m.taskName,
    nodeId: m.nodeId,
    service: m.config.service?.name ?? "",
    attempt: m.dispatch,
  };
}

const tail = (text: string) => (text.length > OUTPUT_TAIL_CHARS ? text.slice(text.length - OUTPUT_TAIL_CHARS) : text);

/** A task's end, from its result (output already without the request's secrets). */
export function taskEndedEvent(r: TaskResult, service: string, at: number): TaskEndedEvent {
  const event: TaskEndedEvent = {
    type: "task.ended",
    tenant: r.tenant,
    clusterId: r.clusterId,
    at,
    planId: r.planId,
    taskId: r.taskId,
    taskName: r.taskName,
    nodeId: r.nodeId,
    service,
    attempt: r.dispatch,
    ok: r.status === 0,
    status: r.status,
    startTime: r.startTime,
    durationMs: Math.max(0, r.endTime - r.startTime),
    resultAt: r.endTime,
  };
  if (r.status !== 0 && (r.stdout || r.stderr)) {
    event.output = {
      ...(r.stdout ? { stdout: tail(r.stdout) } : {}),
      ...(r.stderr ? { stderr: tail(r.stderr) } : {}),
    };
  }
  return event;
}

/**
 * The JetStream message id of an event, derived from what caused it: the same change published again (a
 * redelivered result, a plan republished by the reconciler after a crash) is dropped as a duplicate.
 */
export function clusterEventMessageId(e: ClusterStreamEvent): string {
  switch (e.type) {
    case "cluster.status":
      return `${e.clusterId}.status.${e.planId}.${e.status}`;
    case "lease.changed":
      return `${e.clusterId}.lease.${e.previousExpireTime}.${e.expireTime}`;
    case "plan.stage":
      return `${e.planId}.stage.${e.stage}`;
    case "plan.progress":
      return `${e.planId}.progress.${e.stepscompleted}`;
    case "plan.finished":
      return `${e.planId}.finished`;
    case "task.started":
      return `${e.taskId}.${e.attempt}.started`;
    case "task.ended":
      return `${e.taskId}.${e.attempt}.ended`;
    case "node.health":
      return `${e.nodeId}.health.${e.checkedAt}.${e.state}`;
  }
}
