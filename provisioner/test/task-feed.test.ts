import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { decode, streams, taskConsumerName, type TaskMessage } from "@corral/contracts";
import { ensureStreams, silentLogger } from "@corral/shared";
import { createTaskFeed, type TaskFeed } from "@corral/provisioner/testing";
import { eventually, publishTask, taskMessage, uniqueName } from "./helpers.js";
import { testWithNats } from "../../test/helpers/nats-test.js";

const test = testWithNats("task-feed-test", ensureStreams);

const consumerState = async (nc: NatsConnection, tenant: string) => {
  const info = await (await jetstreamManager(nc)).consumers.info(streams.tasks, taskConsumerName(tenant));
  return { pending: info.num_pending, ackPending: info.num_ack_pending, waiting: info.num_waiting };
};

const feedOf = (t: { context: { nc: NatsConnection } }, tenant: string): TaskFeed =>
  createTaskFeed({ nc: t.context.nc, tenant, log: silentLogger, pullExpiresMs: 2_000 });

test("task feed - pulls only for waiting workers: the rest stay in the queue for other provisioners", async (t) => {
  const tenant = uniqueName("feed");
  const feed = feedOf(t, tenant);
  t.teardown(() => feed.close());
  const tasks = Array.from({ length: 5 }, (_, i) => taskMessage({ tenant, taskId: `00000001-001-${i + 1}` }));
  for (const task of tasks) await publishTask(t.context.nc, task);
  const first = await feed.next(new AbortController().signal);
  t.truthy(first);
  t.is(first?.deliveryCount, 1);
  t.is(decode<TaskMessage>(first!.data).taskId, tasks[0]!.taskId);
  // Nobody else waits: four stay undelivered, one is held by the worker.
  await eventually(async () => {
    const s = await consumerState(t.context.nc, tenant);
    return s.pending === 4 && s.ackPending === 1;
  }, { what: "four undelivered, one held" });
  first?.ack();
  const second = await feed.next(new AbortController().signal);
  t.is(decode<TaskMessage>(second!.data).taskId, tasks[1]!.taskId);
  second?.ack();
});

test("task feed - expired pulls are renewed; a worker that stops waiting hands its late task back", async (t) => {
  const tenant = uniqueName("feed");
  const feed = feedOf(t, tenant);
  t.teardown(() => feed.close());
  // A wait longer than the pull's 2 s expiry still gets the task published after it.
  const waiting = feed.next(new AbortController().signal);
  await new Promise((r) => setTimeout(r, 3_000));
  const task = taskMessage({ tenant, taskId: "00000002-001-1" });
  await publishTask(t.context.nc, task);
  const got = await waiting;
  t.is(decode<TaskMessage>(got!.data).taskId, task.taskId);
  got?.nak();

  // The nak'd task comes back; a worker that gave up before it arrived does not swallow it.
  const giveUp = new AbortController();
  const abandoned = feed.next(giveUp.signal);
  giveUp.abort();
  t.is(await abandoned, undefined);
  const again = await feed.next(new AbortController().signal);
  t.is(decode<TaskMessage>(again!.data).taskId, task.taskId);
  t.true(again!.deliveryCount >= 2, "a redelivery says so");
  again?.ack();
  await eventually(async () => (await consumerState(t.context.nc, tenant)).ackPending === 0, { what: "acked" });
});

test("task feed - a deleted consumer is created again and tasks flow on", async (t) => {
  const tenant = uniqueName("feed");
  const feed = feedOf(t, tenant);
  t.teardown(() => feed.close());
  const one = taskMessage({ tenant, taskId: "00000003-001-1" });
  await publishTask(t.context.nc, one);
  (await feed.next(new AbortController().signal))?.ack();
  await (await jetstreamManager(t.context.nc)).consumers.delete(streams.tasks, taskConsumerName(tenant));
  const waiting = feed.next(new AbortController().signal);
  const two = taskMessage({ tenant, taskId: "00000003-001-2" });
  await publishTask(t.context.nc, two);
  const got = await Promise.race([waiting, new Promise<undefined>((r) => setTimeout(() => r(undefined), 15_000))]);
  t.is(got && decode<TaskMessage>(got.data).taskId, two.taskId);
  got?.ack();
});
