import { spawn } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import anyTest, { type TestFn } from "ava";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { repoRoot, startNats, type NatsHandle } from "@corral/deploy";
import { buckets, kvKey, streams } from "@corral/contracts";
import {
  connectNats,
  ensureStreams,
  ensureTaskConsumer,
  openBucket,
  silentLogger,
} from "@corral/shared";
import { startProvisioner, type RunningProvisioner } from "@corral/provisioner";
import { assignTenant, eventually, publishTask, readResult, taskMessage, uniqueName, waitResult } from "./helpers.js";

interface Context {
  nats: NatsHandle;
  nc: NatsConnection;
  dir: string;
  started: RunningProvisioner[];
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  t.context.nats = await startNats({ jetstream: true, syncAlways: false });
  t.context.nc = await connectNats({ url: t.context.nats.url, name: "provisioner-lifecycle-test" });
  await ensureStreams(t.context.nc);
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-prov-lifecycle-"));
  await chmod(t.context.dir, 0o1777); // actions run as their tenant's sandbox user and read the test's flags here
  t.context.started = [];
});

test.after.always(async (t) => {
  await Promise.all(t.context.started.map((p) => p.stop()));
  await t.context.nc?.drain();
  await t.context.nats?.stop();
  await rm(t.context.dir, { recursive: true, force: true });
});

async function start(t: { context: Context }, extra: { stopTimeoutMs?: number } = {}) {
  const p = await startProvisioner({
    nc: t.context.nc,
    log: silentLogger,
    id: uniqueName("prov"),
    capacity: 2,
    workDir: join(t.context.dir, "work"),
    pullExpiresMs: 1000,
    ...extra,
  });
  t.context.started.push(p);
  return p;
}

async function taskTaken(nc: NatsConnection, tenant: string) {
  const jsm = await jetstreamManager(nc);
  const name = await ensureTaskConsumer(nc, tenant);
  await eventually(async () => (await jsm.consumers.info(streams.tasks, name)).num_ack_pending === 1, {
    what: "the task taken by a worker",
  });
}

const registered = async (nc: NatsConnection, id: string) =>
  (await (await openBucket(nc, buckets.provisioners)).get(kvKey(id)))?.operation === "PUT";

test("stop - a running task finishes and is reported before stop() resolves; the record is removed", async (t) => {
  const p = await start(t);
  const tenant = uniqueName("t");
  await assignTenant(t.context.nc, p.id, tenant, 1);
  const task = taskMessage({
    tenant,
    config: { provider: { name: "p", providertype: "sim", provisioner: { delay_ms: "1500" } } },
  });
  await publishTask(t.context.nc, task);
  await taskTaken(t.context.nc, tenant);
  await p.stop();
  const result = await readResult(t.context.nc, task);
  t.is(result?.status, 0);
  t.is(result?.provisionerId, p.id);
  t.false(await registered(t.context.nc, p.id));
  t.deepEqual(p.usage(), {});
});

test("stop - past stopTimeoutMs a running task is killed and handed back at once", async (t) => {
  const p = await start(t, { stopTimeoutMs: 500 });
  const other = await start(t);
  const tenant = uniqueName("t");
  const flag = join(t.context.dir, uniqueName("flag"));
  await writeFile(flag, "");
  await assignTenant(t.context.nc, p.id, tenant, 1);
  const task = taskMessage({
    tenant,
    taskName: "START",
    config: {
      automators: ["shell"],
      service: {
        name: "s",
        action: { type: "shell", fields: { script: `while [ -f ${flag} ]; do sleep 0.1; done; echo "by $CORRAL_PROVISIONER_ID"` } },
      },
    },
  });
  await publishTask(t.context.nc, task);
  await taskTaken(t.context.nc, tenant);
  await assignTenant(t.context.nc, other.id, tenant, 1);
  const stoppedAt = Date.now();
  await p.stop();
  await rm(flag);
  const result = await waitResult(t.context.nc, task, 5_000);
  t.is(result.provisionerId, other.id);
  t.is(result.stdout, `by ${other.id}\n`);
  t.true(result.startTime - stoppedAt < 5_000, "handed back, not left to the ack wait");
});

test("process - SIGTERM lets the running task finish, removes the record and exits 0", async (t) => {
  const id = uniqueName("child");
  const tenant = uniqueName("t");
  const child = spawn(process.execPath, ["--import=tsx", "provisioner/src/index.ts"], {
    cwd: repoRoot,
    env: {
      ...process.env,
      CORRAL_NATS_URL: t.context.nats.url,
      CORRAL_PROVISIONER_ID: id,
      CORRAL_PROVISIONER_CAPACITY: "3",
      CORRAL_PROVISIONER_WORKDIR: join(t.context.dir, "child"),
      CORRAL_LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  t.teardown(() => void child.kill("SIGKILL"));
  await eventually(() => registered(t.context.nc, id), { what: "the child registered", timeoutMs: 20_000 });
  await assignTenant(t.context.nc, id, tenant, 1);
  const task = taskMessage({
    tenant,
    config: { provider: { name: "p", providertype: "sim", provisioner: { delay_ms: "1000" } } },
  });
  await publishTask(t.context.nc, task);
  await taskTaken(t.context.nc, tenant);
  child.kill("SIGTERM");
  t.is(await exited, 0);
  const result = await readResult(t.context.nc, task);
  t.is(result?.status, 0);
  t.is(result?.provisionerId, id);
  t.false(await registered(t.context.nc, id));
});
