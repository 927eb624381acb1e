import { spawn, type ChildProcess } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { repoRoot, startNats, type NatsHandle } from "@corral/deploy";
import {
  buckets,
  encode,
  kvKey,
  resultSubject,
  streams,
  TASK_ACK_WAIT_MS,
  taskMessageId,
  type TaskMessage,
  type TaskResult,
} from "@corral/contracts";
import {
  connectNats,
  ensureStreams,
  ensureTaskConsumer,
  openBucket,
  resultsMessage,
  silentLogger,
} from "@corral/shared";
import { startProvisioner, type RunningProvisioner } from "@corral/provisioner";
import { assignTenant, countResults, eventually, publishTask, readResult, taskMessage, uniqueName, waitResult } from "./helpers.js";

interface Context {
  nats: NatsHandle;
  nc: NatsConnection;
  workDir: string;
  provisioner: RunningProvisioner;
  children: ChildProcess[];
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  t.context.nats = await startNats({ jetstream: true, syncAlways: false });
  t.context.nc = await connectNats({ url: t.context.nats.url, name: "provisioner-redelivery-test" });
  await ensureStreams(t.context.nc);
  t.context.workDir = await mkdtemp(join(tmpdir(), "corral-prov-redelivery-"));
  await chmod(t.context.workDir, 0o1777); // actions run as their tenant's sandbox user and leave markers here
  t.context.children = [];
  t.context.provisioner = await startProvisioner({
    nc: t.context.nc,
    log: silentLogger,
    id: uniqueName("local"),
    capacity: 10,
    workDir: join(t.context.workDir, "local"),
    pullExpiresMs: 1000,
  });
});

test.after.always(async (t) => {
  for (const child of t.context.children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await t.context.provisioner?.stop();
  await t.context.nc?.drain();
  await t.context.nats?.stop();
  await rm(t.context.workDir, { recursive: true, force: true });
});

const shellTask = (tenant: string, script: string, extra: Partial<TaskMessage> = {}) =>
  taskMessage({
    tenant,
    taskName: "INSTALL",
    ...extra,
    config: { services: ["s"], automators: ["shell"], service: { name: "s", action: { type: "shell", fields: { script } } } },
  });

/** Takes the task once from the tenant's consumer and naks it, so its next delivery is a redelivery. */
async function deliverOnceAndNak(nc: NatsConnection, tenant: string): Promise<void> {
  const name = await ensureTaskConsumer(nc, tenant);
  const consumer = await jetstream(nc).consumers.get(streams.tasks, name);
  const m = await consumer.next({ expires: 5000 });
  if (!m) throw new Error("no task to nak");
  m.nak();
}

async function consumerIdle(nc: NatsConnection, tenant: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const name = await ensureTaskConsumer(nc, tenant);
  await eventually(
    async () => {
      const info = await jsm.consumers.info(streams.tasks, name);
      return info.num_pending === 0 && info.num_ack_pending === 0;
    },
    { what: `tenant ${tenant}'s tasks all acked`, timeoutMs: 10_000 },
  );
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

test("redelivery - a redelivered task whose result exists is acked without running again", async (t) => {
  const tenant = uniqueName("t");
  const marker = join(t.context.workDir, uniqueName("ran"));
  const task = shellTask(tenant, `touch ${marker}; echo second`);
  await publishEarlierResult(t.context.nc, task);
  await publishTask(t.context.nc, task);
  await deliverOnceAndNak(t.context.nc, tenant);

  await expectAckedWithoutRunning(t, tenant, task, marker);
});

/** Gives the tenant a worker until its consumer is idle: the task never ran here and the earlier result is the only one. */
async function expectAckedWithoutRunning(t: ExecutionContext<Context>, tenant: string, task: TaskMessage, marker: string): Promise<void> {
  await assignTenant(t.context.nc, t.context.provisioner.id, tenant, 1);
  await consumerIdle(t.context.nc, tenant);
  t.false(await exists(marker), "the task did not run again");
  t.is(await countResults(t.context.nc, task), 1);
  t.is((await readResult(t.context.nc, task))?.stdout, "first\n");
  await assignTenant(t.context.nc, t.context.provisioner.id, tenant, 0);
}

/**
 * A successful result of the task's dispatch from another provisioner, stored before the task is delivered: alone on
 * its own subject, or in a batch with a sibling of its plan (as a provisioner publishes successes ending together).
 */
async function publishEarlierResult(nc: NatsConnection, task: TaskMessage, options: { batched?: boolean } = {}): Promise<void> {
  const earlier: TaskResult = {
    tenant: task.tenant,
    clusterId: task.clusterId,
    planId: task.planId,
    taskId: task.taskId,
    dispatch: task.dispatch,
    taskName: task.taskName,
    nodeId: task.nodeId,
    provisionerId: "an-earlier-one",
    workerId: "w",
    status: 0,
    stdout: "first\n",
    startTime: 1,
    endTime: 2,
  };
  if (options.batched) {
    const sibling = { ...earlier, taskId: `${task.taskId}-sibling`, stdout: "" };
    const { subject, data } = resultsMessage([sibling, earlier]);
    await jetstream(nc).publish(subject, data);
    return;
  }
  await jetstream(nc).publish(resultSubject(task.tenant, task.taskId, task.dispatch), encode(earlier), {
    msgID: taskMessageId(task.taskId, task.dispatch),
  });
}

test("redelivery - a first delivery seconds after its dispatch whose result exists is acked without running (a consumer leader change, a holder paused past the ack wait)", async (t) => {
  const tenant = uniqueName("t");
  const marker = join(t.context.workDir, uniqueName("ran"));
  const task = shellTask(tenant, `touch ${marker}; echo second`, { submitTime: Date.now() - 5_000 });
  await publishEarlierResult(t.context.nc, task);
  await publishTask(t.context.nc, task);

  await expectAckedWithoutRunning(t, tenant, task, marker);
});

test("redelivery - a first delivery seconds after its dispatch whose result is in its plan's batch is acked without running", async (t) => {
  const tenant = uniqueName("t");
  const marker = join(t.context.workDir, uniqueName("ran"));
  const task = shellTask(tenant, `touch ${marker}; echo second`, { submitTime: Date.now() - 5_000 });
  await publishEarlierResult(t.context.nc, task, { batched: true });
  await publishTask(t.context.nc, task);

  await expectAckedWithoutRunning(t, tenant, task, marker);
});

test("redelivery - a redelivered task without a result runs", async (t) => {
  const tenant = uniqueName("t");
  const marker = join(t.context.workDir, uniqueName("ran"));
  const task = shellTask(tenant, `touch ${marker}; echo ran`);
  await publishTask(t.context.nc, task);
  await deliverOnceAndNak(t.context.nc, tenant);
  await assignTenant(t.context.nc, t.context.provisioner.id, tenant, 1);
  const result = await waitResult(t.context.nc, task);
  t.is(result.status, 0);
  t.is(result.stdout, "ran\n");
  t.true(await exists(marker));
  await consumerIdle(t.context.nc, tenant);
  await assignTenant(t.context.nc, t.context.provisioner.id, tenant, 0);
});

test("redelivery - a provisioner killed mid-task: the task is redelivered to another after the ack wait", async (t) => {
  const tenant = uniqueName("t");
  const childId = uniqueName("child");
  const dir = join(t.context.workDir, uniqueName("kill"));
  await mkdir(dir, { recursive: true });
  await chmod(dir, 0o777);
  const [slow, started, pidFile] = [join(dir, "slow"), join(dir, "started"), join(dir, "pid")];
  await writeFile(slow, "");

  const child = spawn(process.execPath, ["--import=tsx", "provisioner/src/index.ts"], {
    cwd: repoRoot,
    env: {
      ...process.env,
      CORRAL_NATS_URL: t.context.nats.url,
      CORRAL_PROVISIONER_ID: childId,
      CORRAL_PROVISIONER_CAPACITY: "2",
      CORRAL_PROVISIONER_WORKDIR: join(dir, "work"),
      CORRAL_LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  t.context.children.push(child);
  let childLog = "";
  child.stderr!.on("data", (c: Buffer) => (childLog += c.toString()));
  const provisioners = await openBucket(t.context.nc, buckets.provisioners);
  await eventually(async () => (await provisioners.get(kvKey(childId)))?.operation === "PUT", {
    what: `child provisioner registered (log: ${childLog})`,
    timeoutMs: 20_000,
  });

  await assignTenant(t.context.nc, childId, tenant, 1);
  // Runs while the `slow` file exists; records its process group so the test can clean it up.
  const task = shellTask(
    tenant,
    `echo $$ > ${pidFile}; touch ${started}; while [ -f ${slow} ]; do sleep 0.1; done; echo "finished by $CORRAL_PROVISIONER_ID"`,
  );
  await publishTask(t.context.nc, task);
  await eventually(() => exists(started), { what: "the child started the task", timeoutMs: 10_000 });

  await assignTenant(t.context.nc, childId, tenant, 0);
  await assignTenant(t.context.nc, t.context.provisioner.id, tenant, 1);
  child.kill("SIGKILL");
  const killedAt = Date.now();
  await new Promise((r) => child.once("exit", r));
  try {
    process.kill(-Number((await readFile(pidFile, "utf8")).trim()), "SIGKILL"); // the orphaned script
  } catch {
    // gone already
  }
  await rm(slow);

  const result = await waitResult(t.context.nc, task, TASK_ACK_WAIT_MS + 10_000);
  const redeliveredAfterMs = result.startTime - killedAt;
  t.log(`redelivered ${redeliveredAfterMs} ms after kill -9 (ack wait ${TASK_ACK_WAIT_MS} ms)`);
  t.is(result.status, 0);
  t.is(result.provisionerId, t.context.provisioner.id);
  t.is(result.stdout, `finished by ${t.context.provisioner.id}\n`);
  t.true(redeliveredAfterMs <= TASK_ACK_WAIT_MS + 5_000);
  t.is(await countResults(t.context.nc, task), 1);
  await consumerIdle(t.context.nc, tenant);
  await assignTenant(t.context.nc, t.context.provisioner.id, tenant, 0);
});

test("redelivery - a task longer than the ack wait is not redelivered while its worker lives", async (t) => {
  const tenant = uniqueName("t");
  const delayMs = TASK_ACK_WAIT_MS + 2_000;
  const jsm = await jetstreamManager(t.context.nc);
  const name = await ensureTaskConsumer(t.context.nc, tenant);
  const deliveredBefore = (await jsm.consumers.info(streams.tasks, name)).delivered.consumer_seq;
  // Idle workers everywhere that would take a redelivery at once.
  await assignTenant(t.context.nc, t.context.provisioner.id, tenant, 3);
  const task = taskMessage({
    tenant,
    taskName: "CREATE",
    config: { provider: { name: "p", providertype: "sim", provisioner: { delay_ms: String(delayMs) } } },
  });
  await publishTask(t.context.nc, task);
  const result = await waitResult(t.context.nc, task, delayMs + 10_000);
  t.is(result.status, 0);
  t.true(result.endTime - result.startTime >= delayMs - 10);
  const info = await jsm.consumers.info(streams.tasks, name);
  t.is(info.delivered.consumer_seq - deliveredBefore, 1, "delivered exactly once");
  t.is(info.num_redelivered, 0);
  t.is(await countResults(t.context.nc, task), 1);
  await consumerIdle(t.context.nc, tenant);
  await assignTenant(t.context.nc, t.context.provisioner.id, tenant, 0);
});
