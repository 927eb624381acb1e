/** The audit entries of plans' ends, from the events the clusters service stores. */
import test from "ava";
import type { PlanFinishedEvent } from "@corral/contracts";
import { planEndEntry, planEndMessageId, planEndsIn } from "@corral/metrics/testing";

const base = { tenant: "acme", clusterId: "00000007", at: Date.UTC(2026, 10, 28, 12, 0, 0), planId: "00000007-2" };
const succeeded: PlanFinishedEvent = { ...base, type: "plan.finished", action: "CLUSTER_CONFIGURE", outcome: "succeeded", startedBy: "alice" };
const failed: PlanFinishedEvent = {
  ...base,
  type: "plan.finished",
  action: "CLUSTER_CREATE",
  outcome: "failed",
  failure: { taskId: "00000007-2-3", taskName: "CONFIRM", message: "stderr: the machine said no" },
  startedBy: "bob",
};

test("plan ends - found alone or riding inside a progress; nothing in other events", (t) => {
  t.deepEqual(planEndsIn(succeeded), [succeeded]);
  const stage = { ...base, type: "plan.stage", action: "CLUSTER_CREATE", stage: 1, stages: 2, tasks: 1 };
  const progress = { ...base, type: "plan.progress", stage: 1, stepscompleted: 4, stepstotal: 4, then: [stage, failed] };
  t.deepEqual(planEndsIn(progress), [failed]);
  t.deepEqual(planEndsIn({ ...progress, then: undefined }), []);
  t.deepEqual(planEndsIn(stage), []);
  t.deepEqual(planEndsIn({ ...succeeded, outcome: "unknown" }), [], "no such outcome");
  t.deepEqual(planEndsIn({ ...succeeded, planId: "" }), [], "no plan id");
  t.deepEqual(planEndsIn("plan.finished"), []);
});

test("plan ends - the entry names who started it, the operation, the cluster and the outcome", (t) => {
  t.deepEqual(planEndEntry(succeeded), {
    time: "2026-11-28T12:00:00.000Z",
    tenant: "acme",
    user: "alice",
    role: "",
    method: "PLAN",
    route: "/clusters/:id/plans/:planId",
    action: "plan.succeeded",
    target: "00000007",
    status: 200,
    requestId: "00000007-2",
    source: "",
    operation: "CLUSTER_CONFIGURE",
  });
  const { startedBy: _, ...nobody } = succeeded;
  t.is(planEndEntry(nobody).user, "", "a plan nobody asked for (a delete at lease expiry)");
});

test("plan ends - a failure names the task, its service and its node, never its message", (t) => {
  t.like(planEndEntry(failed, { nodeId: "00000007-1001", service: "" }), { action: "plan.failed", status: 500, user: "bob", failedTask: "CONFIRM on 00000007-1001" });
  t.is(planEndEntry(failed, { nodeId: "00000007-1001", service: "nginx" }).failedTask, "CONFIRM nginx on 00000007-1001");
  const told = { ...failed, failure: { ...failed.failure!, nodeId: "00000007-1002", service: "base" } };
  t.is(planEndEntry(told).failedTask, "CONFIRM base on 00000007-1002", "the end's own place when it has one");
  t.is(planEndEntry(failed).failedTask, "CONFIRM", "the place not found");
  t.false(JSON.stringify(planEndEntry(failed)).includes("the machine said no"));
  t.is(planEndEntry({ ...succeeded, failure: failed.failure! }).failedTask, undefined, "a plan that succeeded failed no task");
});

test("plan ends - the message id is the tenant's plan, the same however often the end is delivered", (t) => {
  t.is(planEndMessageId(failed), planEndMessageId({ tenant: "acme", planId: "00000007-2" }));
  t.not(planEndMessageId(failed), planEndMessageId({ ...failed, tenant: "beta" }));
  t.not(planEndMessageId(failed), planEndMessageId({ ...failed, planId: "00000007-3" }));
});
