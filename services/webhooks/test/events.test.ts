/** Which stored events webhooks are told of, in which lane, under which id. */
import test from "ava";
import type { AuditEntry, ClusterStreamEvent } from "@corral/contracts";
import { deliveryIdOf, eventOfAuditEntry, eventsOfClusterMessage, laneOf } from "@corral/webhooks/testing";

const base = { tenant: "acme", clusterId: "00000007", at: 1_700_000_000_000 };

test("a plan.progress gives up the plan.finished it carries; progress and task events are not delivered", (t) => {
  const stored: ClusterStreamEvent = {
    ...base,
    type: "plan.progress",
    planId: "00000007-001",
    stage: 2,
    stepscompleted: 9,
    stepstotal: 9,
    tasksEnded: [
      {
        ...base,
        type: "task.ended",
        planId: "00000007-001",
        taskId: "t9",
        taskName: "START",
        nodeId: "n1",
        service: "base",
        attempt: 1,
        ok: true,
        status: 0,
        startTime: 1,
        durationMs: 1,
        resultAt: 2,
      },
    ],
    then: [{ ...base, type: "plan.finished", planId: "00000007-001", action: "CLUSTER_CREATE", outcome: "succeeded" }],
  };
  const events = eventsOfClusterMessage(stored, 41);
  t.deepEqual(
    events.map((e) => [e.type, e.source.index]),
    [["plan.finished", 2]],
  );
  t.like(events[0]!.data as object, { outcome: "succeeded", planId: "00000007-001" });
  t.is(laneOf(events[0]!), "cluster:00000007");
  t.is(deliveryIdOf("abc", events[0]!.source), "msg_abc_e000000000041_2");
});

test("status, lease and health events are delivered as they are; audit entries of no tenant are not", (t) => {
  const status: ClusterStreamEvent = {
    ...base,
    type: "cluster.status",
    status: "active",
    previous: "pending",
    action: "cluster_create",
    planId: "p",
    progress: { stepstotal: 1, stepscompleted: 1 },
  };
  t.is(eventsOfClusterMessage(status, 1)[0]!.data, status);
  const lease: ClusterStreamEvent = { ...base, type: "lease.changed", expireTime: 5, previousExpireTime: 0 };
  t.is(eventsOfClusterMessage(lease, 2)[0]!.type, "lease.changed");
  const stage: ClusterStreamEvent = { ...base, type: "plan.stage", planId: "p", action: "X", stage: 0, stages: 1, tasks: 1 };
  t.deepEqual(eventsOfClusterMessage(stage, 3), []);

  const entry: AuditEntry = {
    time: "2026-11-28T10:00:00.000Z",
    tenant: "acme",
    user: "admin",
    role: "admin",
    method: "POST",
    route: "/services",
    action: "tenancy.catalog.services.create",
    target: "s",
    status: 200,
    requestId: "r",
    source: "127.0.0.1",
  };
  const audit = eventOfAuditEntry(entry, 9)!;
  t.like(audit, { tenant: "acme", type: "audit", clusterId: "", at: Date.parse(entry.time), source: { stream: "a", seq: 9, index: 0 } });
  t.is(laneOf(audit), "audit");
  t.is(eventOfAuditEntry({ ...entry, tenant: "" }, 10), undefined);
});
