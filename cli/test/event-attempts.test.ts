/**
 * Task attempts from the event stream: a stage's `plan.stage` starts every task of it (no `task.started` comes
 * for a first attempt), a retry's `task.started` keeps the first start, and each end is counted with its output.
 */
import test from "ava";
import type { ClusterStreamEvent, PlanStageEvent, PlanView, TaskEndedEvent, TaskStartedEvent } from "@corral/contracts";
import { EventAttempts } from "../src/progress/event-attempts.js";

const base = { tenant: "t", clusterId: "c", planId: "p" };
const plan: PlanView = {
  id: "p",
  clusterId: "c",
  action: "CLUSTER_CREATE",
  currentStage: 0,
  status: "running",
  createTime: 0,
  stages: [
    [
      { id: "p-0", taskName: "INSTALL", nodeId: "n1", service: "db" },
      { id: "p-1", taskName: "INSTALL", nodeId: "n2", service: "web" },
    ],
    [{ id: "p-2", taskName: "START", nodeId: "n1", service: "db" }],
  ],
};
const stage = (index: number, at: number): PlanStageEvent => ({ ...base, type: "plan.stage", at, action: "CLUSTER_CREATE", stage: index, stages: 2, tasks: plan.stages[index]!.length });
const task = (id: string, attempt: number) => ({ taskId: id, taskName: "INSTALL" as const, nodeId: "n", service: "s", attempt });
const started = (id: string, attempt: number, at: number): TaskStartedEvent => ({ ...base, ...task(id, attempt), type: "task.started", at });
const ended = (id: string, attempt: number, ok: boolean, startTime: number, resultAt: number): TaskEndedEvent => ({
  ...base,
  ...task(id, attempt),
  type: "task.ended",
  at: resultAt,
  ok,
  status: ok ? 0 : 1,
  startTime,
  durationMs: resultAt - startTime,
  resultAt,
  ...(ok ? {} : { output: { stderr: "broke" } }),
});

function apply(attempts: EventAttempts, events: ClusterStreamEvent[]): void {
  for (const e of events) {
    if (e.type === "plan.stage") attempts.stageStarted(plan, e);
    else if (e.type === "task.started") attempts.taskStarted(e);
    else if (e.type === "task.ended") attempts.taskEnded(plan, e);
  }
}

test("event attempts - a stage's tasks start with its plan.stage; a retry keeps the first start; the next stage's tasks wait for theirs", (t) => {
  const attempts = new EventAttempts();
  apply(attempts, [stage(0, 1000), ended("p-0", 1, true, 1200, 1500), ended("p-1", 1, false, 1200, 1600)]);
  t.deepEqual(attempts.of("p-0"), { finished: [{ ok: true }], startedAt: 1000, durationMs: 500 }, "timed from the stage's start, not the worker's");
  t.is(attempts.of("p-2"), undefined, "a later stage's task is not started yet");

  apply(attempts, [started("p-1", 2, 1700), ended("p-1", 2, true, 1800, 2000), stage(1, 2100)]);
  t.deepEqual(attempts.of("p-1"), { finished: [{ ok: false, output: { stderr: "broke" } }, { ok: true }], startedAt: 1000, durationMs: 1000 });
  t.deepEqual(attempts.of("p-2"), { finished: [], startedAt: 2100 });
});
