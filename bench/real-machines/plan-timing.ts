/**
 * Where a plan's time went, from what the REST API shows: the plan's stages (`GET /clusters/{id}/plans`) and each
 * node's action history (`GET /clusters/{id}`: per task its start and end on the provisioner's clock). Tasks are
 * provider tasks (CREATE, CONFIRM, DELETE) or automator tasks (BOOTSTRAP and the service actions).
 *
 * - busy time: the sum of the tasks' durations, per kind and per task name;
 * - critical path: stages run one after another, so the plan's span is the sum of each stage's wall time (from the
 *   end of the stage before, or the first start, to its last end); a stage's wall time counts for the kind of the
 *   task that ended last, and is split into the wait before its first task started (dispatch: the clusters
 *   service saw the previous stage end, published the next, a worker pulled it) and the running part.
 */
import { PROVIDER_TASKS, isTaskName } from "@corral/contracts";
import { latencySummary, round } from "./lib.js";

export type TaskKind = "provider" | "automator";
export const kindOf = (taskName: string): TaskKind => (isTaskName(taskName) && PROVIDER_TASKS.has(taskName) ? "provider" : "automator");

/** The parts of `GET /clusters/{id}/plans` used here. */
export interface PlanView {
  id: string;
  action: string;
  status: string;
  createTime?: number;
  stages: Array<Array<{ id: string; taskName: string; nodeId: string; service?: string }>>;
}

/** The parts of a node of `GET /clusters/{id}` used here. */
export interface NodeActionsView {
  id: string;
  actions: Array<{ taskId: string; action: string; service: string; submitTime: number; statusTime: number; status: string }>;
}

interface TaskTime {
  taskName: string;
  start: number;
  end: number;
  attempts: number;
  failed: boolean;
}

export interface StageTiming {
  index: number;
  tasks: number;
  taskNames: string[];
  kind: TaskKind;
  /** From the previous stage's end (or the plan's first start) to this stage's first start, ms. */
  dispatchWaitMs: number;
  /** From this stage's first start to its last end, ms. */
  runningMs: number;
}

export interface PlanTiming {
  planId: string;
  action: string;
  tasks: number;
  /** Tasks of the plan with no entry in any node's history (should be 0). */
  unseenTasks: number;
  retriedTasks: number;
  failedTasks: number;
  /** First task start to last task end, ms. */
  spanMs: number;
  firstStart: number;
  lastEnd: number;
  busyMs: Record<TaskKind, number>;
  criticalPathMs: Record<TaskKind, { running: number; dispatchWait: number }>;
  byTask: Record<string, { count: number; sumMs: number; ms: ReturnType<typeof latencySummary> }>;
  stages: StageTiming[];
}

function taskTimes(nodes: readonly NodeActionsView[]): Map<string, TaskTime> {
  const out = new Map<string, TaskTime>();
  for (const node of nodes) {
    for (const a of node.actions) {
      const seen = out.get(a.taskId);
      if (!seen) {
        out.set(a.taskId, { taskName: a.action, start: a.submitTime, end: a.statusTime, attempts: 1, failed: a.status !== "complete" });
        continue;
      }
      seen.start = Math.min(seen.start, a.submitTime);
      seen.end = Math.max(seen.end, a.statusTime);
      seen.attempts++;
      seen.failed = a.status !== "complete";
    }
  }
  return out;
}

export function planTiming(plan: PlanView, nodes: readonly NodeActionsView[]): PlanTiming {
  const times = taskTimes(nodes);
  const busyMs: Record<TaskKind, number> = { provider: 0, automator: 0 };
  const critical: PlanTiming["criticalPathMs"] = { provider: { running: 0, dispatchWait: 0 }, automator: { running: 0, dispatchWait: 0 } };
  const durations = new Map<string, number[]>();
  const stages: StageTiming[] = [];
  let unseen = 0;
  let retried = 0;
  let failed = 0;
  let firstStart = Infinity;
  let previousEnd: number | undefined;
  plan.stages.forEach((stage, index) => {
    const seen = stage.map((t) => times.get(t.id)).filter((t): t is TaskTime => t !== undefined);
    unseen += stage.length - seen.length;
    if (seen.length === 0) return;
    for (const t of seen) {
      const ms = t.end - t.start;
      busyMs[kindOf(t.taskName)] += ms;
      durations.set(t.taskName, [...(durations.get(t.taskName) ?? []), ms]);
      if (t.attempts > 1) retried++;
      if (t.failed) failed++;
    }
    const start = Math.min(...seen.map((t) => t.start));
    const last = seen.reduce((a, b) => (b.end > a.end ? b : a));
    firstStart = Math.min(firstStart, start);
    const kind = kindOf(last.taskName);
    const wait = previousEnd === undefined ? 0 : Math.max(0, start - previousEnd);
    const running = last.end - Math.max(start, previousEnd ?? start);
    critical[kind].dispatchWait += wait;
    critical[kind].running += running;
    stages.push({ index, tasks: stage.length, taskNames: [...new Set(stage.map((t) => t.service ? `${t.taskName}:${t.service}` : t.taskName))], kind, dispatchWaitMs: wait, runningMs: running });
    previousEnd = Math.max(previousEnd ?? 0, last.end);
  });
  const byTask: PlanTiming["byTask"] = {};
  for (const [name, ms] of durations) byTask[name] = { count: ms.length, sumMs: Math.round(ms.reduce((a, b) => a + b, 0)), ms: latencySummary(ms) };
  return {
    planId: plan.id,
    action: plan.action,
    tasks: plan.stages.reduce((a, s) => a + s.length, 0),
    unseenTasks: unseen,
    retriedTasks: retried,
    failedTasks: failed,
    spanMs: previousEnd === undefined ? 0 : previousEnd - firstStart,
    firstStart,
    lastEnd: previousEnd ?? firstStart,
    busyMs: { provider: Math.round(busyMs.provider), automator: Math.round(busyMs.automator) },
    criticalPathMs: critical,
    byTask,
    stages,
  };
}

/** A compact form for the results file: shares of the critical path, in seconds. */
export function timingSummary(t: PlanTiming) {
  const s = (ms: number) => round(ms / 1000, 2);
  return {
    tasks: t.tasks,
    spanSeconds: s(t.spanMs),
    providerSeconds: {
      busySum: s(t.busyMs.provider),
      criticalPathRunning: s(t.criticalPathMs.provider.running),
      criticalPathDispatchWait: s(t.criticalPathMs.provider.dispatchWait),
    },
    automatorSeconds: {
      busySum: s(t.busyMs.automator),
      criticalPathRunning: s(t.criticalPathMs.automator.running),
      criticalPathDispatchWait: s(t.criticalPathMs.automator.dispatchWait),
    },
    retriedTasks: t.retriedTasks,
    failedTasks: t.failedTasks,
    unseenTasks: t.unseenTasks,
    byTask: t.byTask,
    stages: t.stages,
  };
}
