/** Node events for metrics (src/domain/node-events.ts): one message per tenant and results batch, deduplicable. */
import test from "ava";
import { TaskName, type TaskResult } from "@corral/contracts";
import { nodeChangesByTenant, nodeEventOf, nodeEventTypeOf, type NodeEvent } from "../src/domain/node-events.js";

const result = (taskName: TaskName, status = 0, tenant = "acme", taskId = "c1-001-001"): TaskResult => ({
  tenant,
  clusterId: "c1",
  planId: "c1-001",
  taskId,
  dispatch: 1,
  taskName,
  nodeId: "c1-n1",
  provisionerId: "p",
  workerId: "w",
  status,
  startTime: 1,
  endTime: 2_000,
});
const eventOf = (r: TaskResult): NodeEvent => nodeEventOf(r, nodeEventTypeOf(r)!, "alice");

test("node events - a successful CREATE or DELETE makes one, with the owner and the task's end time", (t) => {
  t.deepEqual(eventOf(result(TaskName.Create)), {
    type: "node.created",
    tenant: "acme",
    clusterId: "c1",
    nodeId: "c1-n1",
    ownerId: "alice",
    time: 2_000,
    taskId: "c1-001-001",
    dispatch: 1,
  });
  t.is(nodeEventTypeOf(result(TaskName.Delete)), "node.deleted");
  t.is(nodeEventTypeOf(result(TaskName.Create, 1)), undefined, "a failed CREATE");
  t.is(nodeEventTypeOf(result(TaskName.Bootstrap)), undefined);
});

test("node events - one message per tenant; the same events in any order have the same id, others another", (t) => {
  t.deepEqual(nodeChangesByTenant([]), []);
  const a1 = eventOf(result(TaskName.Create, 0, "acme", "c1-001-001"));
  const a2 = eventOf(result(TaskName.Create, 0, "acme", "c1-001-002"));
  const b1 = eventOf(result(TaskName.Delete, 0, "beta", "c1-001-001"));
  const messages = nodeChangesByTenant([a1, b1, a2]);
  t.deepEqual(
    messages.map((m) => m.body),
    [
      { type: "node.changes", tenant: "acme", events: [a1, a2] },
      { type: "node.changes", tenant: "beta", events: [b1] },
    ],
  );
  const ids = messages.map((m) => m.msgId);
  t.deepEqual(nodeChangesByTenant([a2, b1, a1]).map((m) => m.msgId), ids, "a redelivered batch is a duplicate");
  t.not(ids[0], ids[1]);
  t.not(nodeChangesByTenant([a1])[0]!.msgId, ids[0], "a batch of other events is stored");
  t.not(nodeChangesByTenant([{ ...a1, dispatch: 2 }, a2])[0]!.msgId, ids[0], "another dispatch is another event");
});
