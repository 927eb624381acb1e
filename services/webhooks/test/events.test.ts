/** Which stored events webhooks are told of, in which lane, under which id. */
import test from "ava";
import { auditSubject, decode, encode, type AuditBatch, type AuditEntry, type ClusterStreamEvent } from "@corral/contracts";
import { deliveryIdOf, eventOfAuditEntry, eventsOfAuditMessage, eventsOfClusterMessage, laneOf } from "@corral/webhooks/testing";

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

const auditEntry = (tenant: string, n: number): AuditEntry => ({
  time: new Date(Date.UTC(2026, 10, 28, 10, 0, n)).toISOString(),
  tenant,
  user: "admin",
  role: "admin",
  method: "DELETE",
  route: "/services/:name",
  action: "tenancy.catalog.services.delete",
  target: `s-${n}`,
  status: 200,
  requestId: `r-${n}`,
  source: "127.0.0.1",
});

test("each entry of an audit batch is its own event, with a webhook-id of its own, the same when delivered again", (t) => {
  const batch: AuditBatch = { batch: 1, entries: Array.from({ length: 12 }, (_, n) => auditEntry("acme", n)) };
  const message = encode(batch);
  const events = eventsOfAuditMessage(decode(message), auditSubject("acme"), 41);
  t.deepEqual(
    events.map((e) => (e.data as AuditEntry).target),
    batch.entries.map((e) => e.target),
    "every entry, in the order recorded",
  );
  t.true(events.every((e, index) => e.type === "audit" && e.tenant === "acme" && e.source.seq === 41 && e.source.index === index));
  const ids = events.map((e) => deliveryIdOf("w1", e.source));
  t.is(new Set(ids).size, 12, "a webhook-id per entry");
  const again = eventsOfAuditMessage(decode(message), auditSubject("acme"), 41).map((e) => deliveryIdOf("w1", e.source));
  t.deepEqual(again, ids, "the message delivered again gives the same ids");
  t.false(eventsOfAuditMessage(decode(message), auditSubject("acme"), 42).some((e) => ids.includes(deliveryIdOf("w1", e.source))), "another message, other ids");

  // A single entry (a plan's end) is an event at index 0, as before batches.
  const single = eventsOfAuditMessage(auditEntry("acme", 99), auditSubject("acme"), 43);
  t.deepEqual(single.map((e) => e.source), [{ stream: "a", seq: 43, index: 0 }]);
});

test("an audit message gives only the events of its subject's tenant, and none of no tenant or an unknown form", (t) => {
  const mixed = { batch: 1, entries: [auditEntry("acme", 1), auditEntry("beta", 2), auditEntry("", 3), auditEntry("acme", 4)] };
  const onAcme = eventsOfAuditMessage(mixed, auditSubject("acme"), 7);
  t.deepEqual(onAcme.map((e) => [e.tenant, e.source.index]), [["acme", 0], ["acme", 3]]);
  t.deepEqual(eventsOfAuditMessage(mixed, auditSubject("beta"), 7).map((e) => e.tenant), ["beta"]);
  t.deepEqual(eventsOfAuditMessage(mixed, auditSubject(""), 7), [], "no tenant: no endpoint");
  t.deepEqual(eventsOfAuditMessage(auditEntry("beta", 5), auditSubject("acme"), 8), [], "a single entry of another tenant");
  t.deepEqual(eventsOfAuditMessage({ batch: 2, entries: mixed.entries }, auditSubject("acme"), 9), [], "a version not known");
  t.deepEqual(eventsOfAuditMessage("no entry", auditSubject("acme"), 10), []);
});
