/** Who started a plan: recorded in its record at its start, and named by its end event with what failed. */
import test from "ava";
import { PlanAction, TaskName, type Plan } from "@corral/contracts";
import { startActor } from "../src/domain/actors.js";
import { PLAN_MACHINE_VERSION, planMachine, type PlanContext } from "../src/domain/plan-machine.js";
import { newPlan } from "../src/domain/plan-record.js";
import type { PlanRecord } from "../src/domain/records.js";
import { planFinishedEvent } from "../src/domain/stream-events.js";

const planned: Plan = {
  action: PlanAction.RemoveNodes,
  stages: [
    [{ taskName: TaskName.Stop, nodeId: "c-1001", service: "web" }],
    [
      { taskName: TaskName.Delete, nodeId: "c-1001", service: "" },
      { taskName: TaskName.Configure, nodeId: "c-1000", service: "web" },
    ],
  ],
} as unknown as Plan;

function record(startedBy: string | undefined): PlanRecord {
  const start = newPlan({
    id: "c-002",
    cluster: { id: "c", tenant: "t" },
    action: "remove_nodes",
    plan: planned,
    createTime: 5,
    ...(startedBy !== undefined ? { startedBy } : {}),
  });
  return start.recordOf(startActor<PlanContext>(planMachine, PLAN_MACHINE_VERSION, start.input).persisted);
}

test("a plan records the user who started it; its end event names that user", (t) => {
  const plan = record("alice");
  t.is(plan.startedBy, "alice");
  t.like(planFinishedEvent(plan, "succeeded", 9), { type: "plan.finished", planId: "c-002", outcome: "succeeded", startedBy: "alice" });
});

test("a plan nobody asked for names nobody", (t) => {
  const plan = record(undefined);
  t.false("startedBy" in plan);
  t.false("startedBy" in planFinishedEvent(plan, "succeeded", 9));
});

test("a failed plan that keeps its tasks names the failed task's node and service", (t) => {
  const plan = record("alice");
  const failed: PlanRecord = {
    ...plan,
    actor: { ...plan.actor, context: { ...plan.actor.context, failure: { index: 2, taskName: TaskName.Configure, message: "exit 1" } } },
  };
  t.deepEqual(planFinishedEvent(failed, "failed", 9).failure, {
    taskId: "c-002-003",
    taskName: TaskName.Configure,
    message: "exit 1",
    nodeId: "c-1000",
    service: "web",
  });
  const paged: PlanRecord = { ...failed };
  delete paged.tasks;
  t.deepEqual(planFinishedEvent(paged, "failed", 9).failure, { taskId: "c-002-003", taskName: TaskName.Configure, message: "exit 1" }, "tasks kept in pages: no node or service");
});
