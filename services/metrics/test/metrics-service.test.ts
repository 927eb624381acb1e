/**
 * The metrics service on a real nats-server and redis-server, called over NATS as the gateway calls it: the
 * event feed reads batched and single node events, survives a restart without replaying, and refills a Redis that
 * lost its data from the stream.
 */
import anyTest, { type TestFn } from "ava";
import { jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { createClient } from "redis";
import { encode, eventSubject, type Identity } from "@corral/contracts";
import { callEndpoint, connectNats, silentLogger } from "@corral/shared";
import { startMetricsService } from "@corral/metrics";
import { eventually } from "../../../test/helpers/eventually.js";
import { startNats, startRedis, type NatsHandle, type ServerHandle } from "../../../test/helpers/servers.js";

interface Context {
  nats: NatsHandle;
  redis: ServerHandle;
  nc: NatsConnection;
}
const test = anyTest as TestFn<Context>;
test.before(async (t) => {
  t.context.nats = await startNats({ jetstream: true, syncAlways: false });
  t.context.redis = await startRedis();
  t.context.nc = await connectNats({ url: t.context.nats.url, name: "test" });
});
test.after.always(async (t) => {
  await t.context.nc?.drain();
  await t.context.nats?.stop();
  await t.context.redis?.stop();
});

const NOW = 1_800_000_000;
const superadmin: Identity = { userId: "admin", tenant: "superadmin", role: "superadmin" };

test.serial("metrics service - node usage survives a restart and is rebuilt from the stream after Redis loses it", async (t) => {
  const { nc } = t.context;
  const start = () =>
    startMetricsService({ nc, redis: t.context.redis.url, log: silentLogger, now: () => NOW * 1000, emptyCheckMs: 200 });
  let service = await start();
  const js = jetstream(nc);
  const event = (type: string, nodeId: string, seconds: number) => ({ type, tenant: "acme", clusterId: "c1", nodeId, ownerId: "bob", time: seconds * 1000 });
  // As the clusters service publishes them: one message per results batch.
  const sendBatch = (events: object[]) => js.publish(eventSubject("acme", "node.changes"), encode({ type: "node.changes", tenant: "acme", events }));
  // As the stream's older history holds them: one message per event.
  const sendSingle = (type: string, nodeId: string, seconds: number) => js.publish(eventSubject("acme", type), encode(event(type, nodeId, seconds)));
  await sendBatch([event("node.created", "n1", NOW - 100), event("node.deleted", "n1", NOW - 40)]);
  await sendBatch([event("node.created", "n2", NOW - 10)]);
  const usage = async () =>
    (await callEndpoint(nc, "metrics.nodeUsage", { identity: superadmin, params: {}, query: {} })).data[0]?.value;
  await eventually(async () => (await usage()) === 70, { what: "usage recorded", timeoutMs: 10_000 });

  await service.stop();
  service = await start();
  t.is(await usage(), 70, "a restarted service keeps the data");
  await sendSingle("node.deleted", "n2", NOW - 5);
  await eventually(async () => (await usage()) === 65, { what: "a later single event recorded after the restart", timeoutMs: 10_000 });

  const redis = createClient({ url: t.context.redis.url });
  await redis.connect();
  await redis.flushAll();
  await redis.close();
  t.is(await usage(), 0, "Redis lost everything");
  await eventually(async () => (await usage()) === 65, { what: "usage rebuilt from the events stream, batches and single events", timeoutMs: 15_000 });
  await service.stop();
});

test.serial("metrics service - queue metrics are refused to an ordinary user even without the gateway", async (t) => {
  const service = await startMetricsService({ nc: t.context.nc, redis: t.context.redis.url, log: silentLogger });
  const err = await t.throwsAsync(
    callEndpoint(t.context.nc, "metrics.queues", { identity: { userId: "bob", tenant: "acme", role: "user" }, params: {}, query: {} }),
  );
  t.is((err as { status?: number }).status, 403);
  t.deepEqual(
    await callEndpoint(t.context.nc, "metrics.queues", { identity: { userId: "admin", tenant: "acme", role: "admin" }, params: {}, query: {} }),
    { acme: { inProgress: 0, queued: 0, total: 0 } },
  );
  await service.stop();
});
