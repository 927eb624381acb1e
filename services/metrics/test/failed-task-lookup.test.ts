/**
 * Where a failed plan's task ran, when the plan's end does not say (plans that keep their tasks in pages): read back
 * from the end's position on the cluster's `task.ended` subject, on a real nats-server.
 */
import anyTest, { type TestFn } from "ava";
import { jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { clusterEventSubject, encode, eventSubject, type PlanFinishedEvent, type TaskEndedEvent } from "@corral/contracts";
import { connectNats, ensureLiveEventRepublish, ensureStreams } from "@corral/shared";
import { failedTaskLookup } from "@corral/metrics/testing";
import { startNats, type NatsHandle } from "../../../test/helpers/servers.js";

const test = anyTest as TestFn<{ nats: NatsHandle; nc: NatsConnection }>;
test.before(async (t) => {
  t.context.nats = await startNats({ jetstream: true, syncAlways: false });
  t.context.nc = await connectNats({ url: t.context.nats.url, name: "test" });
  await ensureStreams(t.context.nc);
  await ensureLiveEventRepublish(t.context.nc); // direct gets on the events stream, as the bus is prepared
});
test.after.always(async (t) => {
  await t.context.nc?.drain();
  await t.context.nats?.stop();
});

const at = Date.now();
const ended = (clusterId: string, taskId: string, nodeId: string, service: string, ok: boolean): TaskEndedEvent => ({
  type: "task.ended",
  tenant: "acme",
  clusterId,
  at,
  planId: `${clusterId}-2`,
  taskId,
  taskName: "START",
  nodeId,
  service,
  attempt: 1,
  ok,
  status: ok ? 0 : 1,
  startTime: at,
  durationMs: 1,
  resultAt: at,
});
const endOf = (clusterId: string, taskId: string): PlanFinishedEvent => ({
  type: "plan.finished",
  tenant: "acme",
  clusterId,
  at,
  planId: `${clusterId}-2`,
  action: "RESTART_SERVICES",
  outcome: "failed",
  failure: { taskId, taskName: "START", message: "exit 1" },
});

test("failed task lookup - the task's last failure before the end, found behind thousands of other events", async (t) => {
  const js = jetstream(t.context.nc);
  const publish = async (subject: string, data: unknown) => (await js.publish(subject, encode(data))).seq;
  const subject = clusterEventSubject("acme", "c1", "task.ended");
  await publish(subject, ended("c1", "c1-2-7", "c1-1000", "nginx", false));
  await publish(subject, ended("c1", "c1-2-7", "c1-1001", "nginx", false));
  await publish(subject, ended("c1", "c1-2-8", "c1-1002", "redis", false));
  await publish(clusterEventSubject("acme", "c2", "task.ended"), ended("c2", "c1-2-7", "c2-1000", "nginx", false));
  // More than the first windows hold, on other subjects.
  for (let i = 0; i < 3000; i++) await publish(eventSubject("acme", "node.changes"), { type: "node.changes", tenant: "acme", events: [] });
  const endSeq = await publish(clusterEventSubject("acme", "c1", "plan.finished"), endOf("c1", "c1-2-7"));
  await publish(subject, ended("c1", "c1-2-7", "c1-1009", "nginx", false));

  const lookup = failedTaskLookup(t.context.nc);
  t.deepEqual(await lookup(endOf("c1", "c1-2-7"), endSeq), { nodeId: "c1-1001", service: "nginx" }, "the last before the end, on this cluster");
  t.deepEqual(await lookup(endOf("c1", "c1-2-8"), endSeq), { nodeId: "c1-1002", service: "redis" });
  t.is(await lookup(endOf("c1", "c1-2-9"), endSeq), undefined, "no failure of that task");
  const { failure: _, ...succeeded } = endOf("c1", "c1-2-7");
  t.is(await lookup({ ...succeeded, outcome: "succeeded" }, endSeq), undefined);
});
