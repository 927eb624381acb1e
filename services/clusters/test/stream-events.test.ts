/**
 * planWriteEvents (src/domain/stream-events.ts): the successes a plan write records, and the stage it starts or the
 * end it reaches, ride inside its `plan.progress`; task ends the write did not record (an earlier delivery did) are
 * announced on their own.
 */
import test from "ava";
import { clientEventsOf, TaskName, type TaskEndedEvent } from "@corral/contracts";
import { planWriteEvents } from "../src/domain/stream-events.js";
import type { PlanRecord } from "../src/domain/records.js";

const plan = (completed: number, stage = 1) =>
  ({
    id: "c-001",
    clusterId: "c",
    tenant: "t",
    action: "CLUSTER_CREATE",
    createTime: 0,
    stageSizes: [2, 2, 2],
    actor: { machine: "plan@1", value: "running", context: { completed, stage } },
  }) as unknown as PlanRecord;

const ended = (n: number): TaskEndedEvent => ({
  type: "task.ended",
  tenant: "t",
  clusterId: "c",
  at: 9,
  planId: "c-001",
  taskId: `c-001-00${n}`,
  taskName: TaskName.Confirm,
  nodeId: `c-n${n}`,
  service: "",
  attempt: 1,
  ok: true,
  status: 0,
  startTime: 1,
  durationMs: 1,
  resultAt: 2,
});

test("a write that recorded every success it was given stores them inside its progress", (t) => {
  const events = planWriteEvents(plan(2), plan(4, 2), [], 10, [ended(3), ended(4)]);
  t.is(events.length, 1, "one stored message");
  const [progress] = events;
  t.like(progress, { type: "plan.progress", stepscompleted: 4, stepstotal: 6, stage: 2 });
  t.deepEqual(progress?.type === "plan.progress" ? progress.tasksEnded : undefined, [ended(3), ended(4)]);
  t.deepEqual(
    clientEventsOf(progress!).map((e) => e.type),
    ["task.ended", "task.ended", "plan.progress"],
    "clients get each end first, then the progress",
  );
});

test("a write that recorded fewer (some were recorded by an earlier delivery) announces each on its own", (t) => {
  const events = planWriteEvents(plan(3), plan(4, 2), [], 10, [ended(3), ended(4)]);
  t.deepEqual(
    events.map((e) => e.type),
    ["task.ended", "task.ended", "plan.progress"],
  );
  t.false(events.some((e) => e.type === "plan.progress" && e.tasksEnded !== undefined));
});

test("a write that recorded none (a redelivered batch) announces the ends alone; no successes: the progress alone", (t) => {
  t.deepEqual(planWriteEvents(plan(4), plan(4), [], 10, [ended(3)]), [ended(3)]);
  t.deepEqual(planWriteEvents(plan(4), plan(4), [], 10), []);
  const [progress] = planWriteEvents(plan(3), plan(4), [], 10);
  t.true(progress?.type === "plan.progress" && progress.tasksEnded === undefined);
});

test("the stage a write starts and the end it reaches ride inside its progress, and reach clients after it", (t) => {
  const [progress, ...rest] = planWriteEvents(plan(2), plan(4, 2), [{ type: "publishStage", stage: 2 }], 10, [ended(3), ended(4)]);
  t.deepEqual(rest, []);
  t.deepEqual(
    clientEventsOf(progress!).map((e) => e.type),
    ["task.ended", "task.ended", "plan.progress", "plan.stage"],
  );
  t.like(clientEventsOf(progress!).at(-1), { type: "plan.stage", stage: 2, stages: 3, tasks: 2 });

  const [last] = planWriteEvents(plan(5, 2), plan(6, 3), [{ type: "planFinished", outcome: "succeeded" }], 10, [ended(6)]);
  t.deepEqual(
    clientEventsOf(last!).map((e) => e.type),
    ["task.ended", "plan.progress", "plan.finished"],
  );
  // A failed end completes nothing: no progress to ride in, the end goes alone.
  t.deepEqual(
    planWriteEvents(plan(5, 2), plan(5, 2), [{ type: "planFinished", outcome: "failed" }], 10).map((e) => e.type),
    ["plan.finished"],
  );
});
