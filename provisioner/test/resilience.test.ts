import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import anyTest, { type TestFn } from "ava";
import type { NatsConnection } from "@nats-io/transport-node";
import { startNats, type NatsHandle } from "@corral/deploy";
import {
  buckets,
  decode,
  kvKey,
  pluginTypeKey,
  type ProvisionerRecord,
} from "@corral/contracts";
import {
  connectNats,
  ensureStreams,
  openBucket,
  silentLogger,
} from "@corral/shared";
import { startProvisioner, type RunningProvisioner } from "@corral/provisioner";
import { assignTenant, eventually, publishTask, taskMessage, uniqueName, waitResult } from "./helpers.js";

/** Each test restarts its own nats-server, so they run one after another. */
const test = anyTest.serial as TestFn<{ dir: string; cleanup: Array<() => Promise<unknown>> }>;

test.beforeEach(async (t) => {
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-prov-resilience-"));
  t.context.cleanup = [];
});

test.afterEach.always(async (t) => {
  for (const fn of t.context.cleanup.reverse()) await fn().catch(() => {});
  await rm(t.context.dir, { recursive: true, force: true });
});

async function setUp(t: { context: { dir: string; cleanup: Array<() => Promise<unknown>> } }) {
  const storeDir = join(t.context.dir, "store");
  let nats: NatsHandle = await startNats({ jetstream: true, syncAlways: false, storeDir });
  t.context.cleanup.push(() => nats.stop());
  const nc = await connectNats({ url: nats.url, name: "provisioner-resilience-test" });
  t.context.cleanup.push(() => nc.close());
  await ensureStreams(nc);
  const provisioner = await startProvisioner({
    nc,
    log: silentLogger,
    id: uniqueName("prov"),
    capacity: 4,
    workDir: join(t.context.dir, "work"),
    heartbeatMs: 250,
    pullExpiresMs: 1000,
    assignmentPollMs: 500,
    stopTimeoutMs: 2000,
  });
  t.context.cleanup.push(() => provisioner.stop());
  const tenant = uniqueName("t");
  await assignTenant(nc, provisioner.id, tenant, 2);
  const restart = async (opts: { wipe: boolean }) => {
    const port = nats.port;
    await nats.stop();
    if (opts.wipe) await rm(storeDir, { recursive: true, force: true });
    nats = await startNats({ jetstream: true, syncAlways: false, storeDir, port });
  };
  return { nc, provisioner, tenant, restart };
}

async function runOne(nc: NatsConnection, tenant: string) {
  const task = taskMessage({ tenant, taskName: "CREATE" });
  // Right after a restart JetStream may not answer yet: the test's own publish retries too.
  await eventually(() => publishTask(nc, task, { timeoutMs: 1000 }).then(() => true), {
    what: "the task published",
    timeoutMs: 20_000,
  });
  return waitResult(nc, task, 30_000);
}

async function record(nc: NatsConnection, p: RunningProvisioner) {
  const e = await (await openBucket(nc, buckets.provisioners)).get(kvKey(p.id));
  return e?.operation === "PUT" ? decode<ProvisionerRecord>(e.value) : undefined;
}

test("resilience - worker loops and heartbeats go on after the NATS server restarts", async (t) => {
  const { nc, provisioner, tenant, restart } = await setUp(t);
  t.is((await runOne(nc, tenant)).status, 0);
  await restart({ wipe: false });
  const since = Date.now();
  const again = await runOne(nc, tenant);
  t.is(again.status, 0);
  t.log(`first task after the restart done ${again.endTime - since} ms after the server was back`);
  await eventually(async () => ((await record(nc, provisioner))?.lastHeartbeat ?? 0) > since, {
    what: "a heartbeat after the restart",
    timeoutMs: 10_000,
  });
  t.deepEqual(provisioner.usage(), { [tenant]: 2 });
});

test("resilience - after the server lost its state, the provisioner registers again and resumes", async (t) => {
  const { nc, provisioner, tenant, restart } = await setUp(t);
  t.is((await runOne(nc, tenant)).status, 0);
  await restart({ wipe: true });
  await eventually(() => nc.isClosed() === false && nc.getServer() !== "", { what: "reconnected" });
  await eventually(async () => (await record(nc, provisioner)) ?? false, {
    what: "the record written again",
    timeoutMs: 15_000,
  });
  const pluginTypes = await openBucket(nc, buckets.pluginTypes);
  t.is((await pluginTypes.get(pluginTypeKey("providertypes", "sim")))?.operation, "PUT");
  // The clusters service recreates the streams; tenancy writes the assignment again.
  await ensureStreams(nc);
  await assignTenant(nc, provisioner.id, tenant, 2);
  t.is((await runOne(nc, tenant)).status, 0);
});
