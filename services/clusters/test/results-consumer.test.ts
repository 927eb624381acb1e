/**
 * The results consumer (src/engine/results-consumer.ts) on a real nats-server, with plan deliveries replaced by a
 * recorder: results that wait behind a batch slower than the ack wait are kept by in-progress acks, not delivered
 * again (a repeat costs a second application and a second ack, and under load makes the slow spell longer).
 */
import { randomUUID } from "node:crypto";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { consumers, encode, RESULTS_ACK_WAIT_MS, resultSubject, streams, TaskName, taskMessageId, type TaskResult } from "@corral/contracts";
import { resultsMessage, silentLogger } from "@corral/shared";
import type { Effects } from "../src/actor/index.js";
import { openEngineDeps } from "../src/adapters/deps.js";
import { startResultsConsumer } from "../src/engine/results/consumer.js";
import { eventually } from "../../../test/helpers/eventually.js";
import { testWithNats } from "../../../test/helpers/nats-test.js";
import { tenancyOf, testCatalog } from "./helpers/core.js";

const test = testWithNats("clusters-results-consumer-test");
const RESULTS = 300;

test("results consumer - results queued behind a batch slower than the ack wait are applied and acked once", async (t) => {
  const tenant = { name: `t${randomUUID().slice(0, 8)}`, workers: 1 };
  const deps = await openEngineDeps(t.context.nc, { log: silentLogger, tenancy: tenancyOf(tenant, testCatalog()) });
  const applied: string[] = [];
  let slowBatchStarted: () => void = () => {};
  const slowBatch = new Promise<void>((resolve) => (slowBatchStarted = resolve));
  let calls = 0;
  const deliverToPlan: Effects["deliverToPlan"] = async (_ref, events) => {
    for (const e of events) if (e.type === "task.result") applied.push(`${e.index}.${e.dispatch}`);
    if (calls++ > 0) return;
    slowBatchStarted();
    await new Promise((resolve) => setTimeout(resolve, RESULTS_ACK_WAIT_MS + 2_000));
  };
  const consumer = await startResultsConsumer(deps, { deliverToPlan } as Effects);
  t.teardown(() => consumer.stop());

  const js = jetstream(t.context.nc);
  const planId = "c1-001";
  const publish = (from: number, to: number) =>
    Promise.all(
      Array.from({ length: to - from }, (_, k) => {
        const i = from + k;
        const taskId = `${planId}-${String(i + 1).padStart(3, "0")}`;
        const result: TaskResult = {
          tenant: tenant.name,
          clusterId: "c1",
          planId,
          taskId,
          dispatch: 1,
          taskName: TaskName.Bootstrap,
          nodeId: "c1-n1",
          provisionerId: "p",
          workerId: "w",
          status: 0,
          startTime: 1,
          endTime: 2,
        };
        return js.publish(resultSubject(tenant.name, taskId, 1), encode(result), { msgID: taskMessageId(taskId, 1) });
      }),
    );
  // A first batch that takes longer than the ack wait, then the rest queued behind it.
  await publish(0, 10);
  await slowBatch;
  await publish(10, RESULTS);

  const jsm = await jetstreamManager(t.context.nc);
  const info = await eventually(
    async () => {
      const i = await jsm.consumers.info(streams.results, consumers.results);
      return i.ack_floor.stream_seq >= RESULTS && i.num_ack_pending === 0 ? i : false;
    },
    { what: "every result acked", timeoutMs: 30_000, intervalMs: 200 },
  );
  t.is(info.num_redelivered, 0, "no result delivered twice");
  t.is(applied.length, RESULTS, "each result applied once");
  t.is(new Set(applied).size, RESULTS);
});

// Serial: both tests read through the one durable results consumer, so each must have it to itself.
test.serial("results consumer - a provisioner's batch of one plan's results is applied result by result and acked as one message", async (t) => {
  const tenant = { name: `t${randomUUID().slice(0, 8)}`, workers: 1 };
  const deps = await openEngineDeps(t.context.nc, { log: silentLogger, tenancy: tenancyOf(tenant, testCatalog()) });
  const applied: string[] = [];
  const deliverToPlan: Effects["deliverToPlan"] = async (ref, events) => {
    for (const e of events) if (e.type === "task.result") applied.push(`${ref.planId}/${e.index}.${e.dispatch}`);
  };
  const consumer = await startResultsConsumer(deps, { deliverToPlan } as Effects);
  t.teardown(() => consumer.stop());

  const result = (planId: string, i: number): TaskResult => ({
    tenant: tenant.name,
    clusterId: "c2",
    planId,
    taskId: `${planId}-${String(i + 1).padStart(3, "0")}`,
    dispatch: 1,
    taskName: TaskName.Bootstrap,
    nodeId: "c2-n1",
    provisionerId: "p",
    workerId: "w",
    status: 0,
    startTime: 1,
    endTime: 2,
  });
  const js = jetstream(t.context.nc);
  const messages = [
    Array.from({ length: 10 }, (_, i) => result("c2-001", i)),
    Array.from({ length: 5 }, (_, i) => result("c2-002", i)),
    [result("c2-001", 10)],
  ];
  const first = (await jetstreamManager(t.context.nc).then((jsm) => jsm.streams.info(streams.results))).state.last_seq;
  for (const m of messages) {
    const { subject, data } = resultsMessage(m);
    await js.publish(subject, data);
  }
  const jsm = await jetstreamManager(t.context.nc);
  await eventually(
    async () => {
      const i = await jsm.consumers.info(streams.results, consumers.results);
      return i.ack_floor.stream_seq >= first + messages.length && i.num_ack_pending === 0;
    },
    { what: "the three messages acked", timeoutMs: 15_000, intervalMs: 100 },
  );
  t.is(applied.length, 16, "every result of every message applied once");
  t.deepEqual(applied.filter((a) => a.startsWith("c2-002/")).sort(), ["c2-002/0.1", "c2-002/1.1", "c2-002/2.1", "c2-002/3.1", "c2-002/4.1"]);
});
