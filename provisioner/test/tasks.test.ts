import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import anyTest, { type TestFn } from "ava";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { startNats, type NatsHandle } from "@corral/deploy";
import { streams, taskSubject, type TaskMessage } from "@corral/contracts";
import {
  connectNats,
  ensureStreams,
  ensureTaskConsumer,
  silentLogger,
} from "@corral/shared";
import {
  createShellAutomator,
  createSimProvider,
  nodeDir,
  startProvisioner,
  type AutomatorPlugin,
  type RunningProvisioner,
} from "@corral/provisioner";
import { assign, eventually, publishTask, readResult, taskMessage, uniqueName, waitResult } from "./helpers.js";

interface Context {
  nats: NatsHandle;
  nc: NatsConnection;
  workDir: string;
  provisioner: RunningProvisioner;
  /** A tenant with 4 worker loops on the provisioner. */
  tenant: string;
}
const test = anyTest as TestFn<Context>;

/** An automator whose every operation throws, to check that a plugin exception becomes a failed result. */
const throwing: AutomatorPlugin = {
  kind: "automatortypes",
  spec: { name: "throwing", parameters: { admin: { fields: {}, required: [] } } },
  bootstrap: () => Promise.reject(new Error("bootstrap exploded")),
  runAction: () => {
    throw new RangeError("action exploded");
  },
};

test.before(async (t) => {
  t.context.nats = await startNats({ jetstream: true, syncAlways: false });
  t.context.nc = await connectNats({ url: t.context.nats.url, name: "provisioner-tasks-test" });
  await ensureStreams(t.context.nc);
  t.context.workDir = await mkdtemp(join(tmpdir(), "corral-prov-tasks-"));
  t.context.provisioner = await startProvisioner({
    nc: t.context.nc,
    log: silentLogger,
    id: uniqueName("prov"),
    capacity: 8,
    workDir: t.context.workDir,
    plugins: [createSimProvider({ random: () => 0.5 }), createShellAutomator(), throwing],
    pullExpiresMs: 1000,
  });
  t.context.tenant = uniqueName("tenant");
  await assign(t.context.nc, t.context.provisioner.id, { [t.context.tenant]: 4 });
});

test.after.always(async (t) => {
  await t.context.provisioner?.stop();
  await t.context.nc?.drain();
  await t.context.nats?.stop();
  await rm(t.context.workDir, { recursive: true, force: true });
});

async function run(t: { context: Context }, input: Omit<Parameters<typeof taskMessage>[0], "tenant">) {
  const task = taskMessage({ tenant: t.context.tenant, ...input });
  await publishTask(t.context.nc, task);
  return { task, result: await waitResult(t.context.nc, task) };
}

const shellAction = (fields: Record<string, string>, taskName: TaskMessage["taskName"] = "INSTALL") => ({
  taskName,
  config: {
    services: ["web"],
    automators: ["shell"],
    ipaddresses: { access_v4: "100.64.0.7", bind_v4: "10.0.0.7" },
    service: { name: "web", action: { type: "shell", fields } },
  },
});

test("sim - CREATE answers a unique providerid and ssh-auth", async (t) => {
  const [a, b] = await Promise.all([run(t, { taskName: "CREATE" }), run(t, { taskName: "CREATE" })]);
  for (const { task, result } of [a, b]) {
    t.like(result, {
      tenant: t.context.tenant,
      clusterId: task.clusterId,
      planId: task.planId,
      taskId: task.taskId,
      dispatch: 1,
      taskName: "CREATE",
      nodeId: task.nodeId,
      provisionerId: t.context.provisioner.id,
      status: 0,
    });
    t.regex(String(result.result?.["providerid"]), /^sim-/);
    t.like(result.result?.["ssh-auth"] as object, { user: "ubuntu" });
    t.true(result.startTime <= result.endTime);
    t.truthy(result.workerId);
  }
  t.not(a.result.result?.["providerid"], b.result.result?.["providerid"]);
});

test("sim - CONFIRM keeps the suggested hostname and gives unique addresses", async (t) => {
  const runs = await Promise.all(
    [1000, 1001, 1002, 1003, 1004].map((n) => run(t, { taskName: "CONFIRM", config: { hostname: `c-${n}.local`, nodenum: n } })),
  );
  const seen = new Set<string>();
  for (const { task, result } of runs) {
    t.is(result.status, 0);
    t.is(result.hostname, task.config.hostname);
    const ip = result.ipaddresses!;
    t.regex(ip["access_v4"]!, /^\d+\.\d+\.\d+\.\d+$/);
    t.regex(ip["bind_v4"]!, /^10\.\d+\.\d+\.\d+$/);
    seen.add(ip["access_v4"]!).add(ip["bind_v4"]!);
  }
  t.is(seen.size, 10);
  const unnamed = await run(t, { taskName: "CONFIRM", config: { hostname: "", nodenum: 1042 } });
  t.regex(unnamed.result.hostname!, /^sim-1042-[0-9a-f]{8}\.local$/);
});

test("sim - DELETE succeeds; unknown provider fields are ignored", async (t) => {
  const { result } = await run(t, {
    taskName: "DELETE",
    config: { provider: { name: "p", providertype: "sim", provisioner: { whatever: "x", another: "s" } } },
  });
  t.is(result.status, 0);
});

const simWith = (provisioner: Record<string, string | number>, config: Record<string, unknown> = {}) => ({
  provider: { name: "p", providertype: "sim", provisioner },
  ...config,
});

test("sim - fail_<task> fails that task type only", async (t) => {
  const fields = { fail_confirm: "true" };
  const confirm = await run(t, { taskName: "CONFIRM", config: simWith(fields) });
  t.is(confirm.result.status, 1);
  t.regex(confirm.result.stderr!, /CONFIRM fails by configuration \(fail_confirm\)/);
  t.is(confirm.result.hostname, undefined);
  const create = await run(t, { taskName: "CREATE", config: simWith(fields) });
  t.is(create.result.status, 0);
});

test("sim - fail_nodes fails the listed hostnames and node numbers", async (t) => {
  const fields = { fail_nodes: "bad-1.local, 1007" };
  const byName = await run(t, { taskName: "CREATE", config: simWith(fields, { hostname: "bad-1.local" }) });
  const byNum = await run(t, { taskName: "DELETE", config: simWith(fields, { hostname: "x.local", nodenum: 1007 }) });
  const ok = await run(t, { taskName: "CREATE", config: simWith(fields, { hostname: "good.local", nodenum: 1008 }) });
  t.is(byName.result.status, 1);
  t.regex(byName.result.stderr!, /fail_nodes/);
  t.is(byNum.result.status, 1);
  t.is(ok.result.status, 0);
});

test("sim - failure_probability fails when the random draw is below it", async (t) => {
  // The provisioner's sim draws 0.5 every time.
  const high = await run(t, { taskName: "CREATE", config: simWith({ failure_probability: "0.75" }) });
  const low = await run(t, { taskName: "CREATE", config: simWith({ failure_probability: 0.25 }) });
  t.is(high.result.status, 1);
  t.regex(high.result.stderr!, /failure_probability/);
  t.is(low.result.status, 0);
});

test("sim - delay_ms and delay_<task>_ms delay the task", async (t) => {
  const { result } = await run(t, { taskName: "CREATE", config: simWith({ delay_ms: "50", delay_create_ms: "400" }) });
  t.true(result.endTime - result.startTime >= 390); // timers may fire a millisecond early
  const other = await run(t, { taskName: "DELETE", config: simWith({ delay_ms: "300", delay_create_ms: "5000" }) });
  t.true(other.result.endTime - other.result.startTime >= 290);
  t.true(other.result.endTime - other.result.startTime < 4000);
});

test("shell - runs script with args and reports stdout", async (t) => {
  const { result } = await run(t, shellAction({ script: "echo", args: "hello world" }));
  t.is(result.status, 0);
  t.is(result.stdout, "hello world\n");
  t.is(result.taskName, "INSTALL");
});

test("shell - a failing script reports its exit code and stderr", async (t) => {
  const { result } = await run(t, shellAction({ script: "echo oops >&2; exit 3" }, "START"));
  t.is(result.status, 3);
  t.is(result.stderr, "oops\n");
});

test("shell - the task is in the environment and in CORRAL_TASK_FILE, in the node's directory", async (t) => {
  const script =
    'echo "$CORRAL_TASK_NAME|$CORRAL_TASK_ID|$CORRAL_CLUSTER_ID|$CORRAL_NODE_ID|$CORRAL_HOSTNAME|$CORRAL_SERVICE|$CORRAL_IP"; ' +
    'pwd; cat "$CORRAL_TASK_FILE"; echo; dirname "$CORRAL_TASK_FILE"; echo "$PATH"';
  const { task, result } = await run(t, shellAction({ script }, "CONFIGURE"));
  t.is(result.status, 0, result.stderr);
  const [vars, cwd, json, fileDir, path] = result.stdout!.trimEnd().split("\n");
  t.is(vars, `CONFIGURE|${task.taskId}|${task.clusterId}|${task.nodeId}|test1-1000.local|web|100.64.0.7`);
  const dir = nodeDir(t.context.workDir, t.context.tenant, task.clusterId, task.nodeId);
  t.is(cwd, dir);
  t.is(fileDir, dir);
  t.deepEqual(JSON.parse(json!), task);
  t.true(path!.startsWith(join(t.context.workDir, t.context.tenant, "automatortypes", "shell", "scripts") + ":"));
  // The task file holds provider credentials: removed after the action.
  const left = await readdir(dir);
  t.deepEqual(left.filter((f) => f.startsWith("task-")), []);
});

test("shell - timeout_s kills the process group", async (t) => {
  // In the node's directory: the sandboxed action may write nowhere else under the work directory.
  const { task, result } = await run(t, shellAction({ script: "touch started; (sleep 3; touch late) & sleep 30", timeout_s: "1" }));
  t.is(result.status, 1);
  t.regex(result.stderr!, /timed out after 1 s/);
  t.true(result.endTime - result.startTime < 10_000);
  const dir = nodeDir(t.context.workDir, t.context.tenant, task.clusterId, task.nodeId);
  await stat(join(dir, "started"));
  await new Promise((r) => setTimeout(r, 3_000));
  await t.throwsAsync(stat(join(dir, "late")), undefined, "the background child was killed too");
});

test("shell - a missing script or a bad timeout_s fails with a clear message", async (t) => {
  const none = await run(t, shellAction({ args: "x" }));
  t.is(none.result.status, 1);
  t.regex(none.result.stderr!, /no script field/);
  const bad = await run(t, shellAction({ script: "true", timeout_s: "soon" }));
  t.is(bad.result.status, 1);
  t.regex(bad.result.stderr!, /timeout_s must be a positive number/);
});

test("bootstrap - zero automators succeed; shell creates the node directory", async (t) => {
  const none = await run(t, { taskName: "BOOTSTRAP", config: { automators: [] } });
  t.is(none.result.status, 0);
  const { task, result } = await run(t, { taskName: "BOOTSTRAP", config: { automators: ["shell"] } });
  t.is(result.status, 0);
  t.true((await stat(nodeDir(t.context.workDir, t.context.tenant, task.clusterId, task.nodeId))).isDirectory());
});

test("bootstrap - an unknown automator fails the task", async (t) => {
  const { result } = await run(t, { taskName: "BOOTSTRAP", config: { automators: ["shell", "puppet"] } });
  t.is(result.status, 1);
  t.regex(result.stderr!, /unknown automator type puppet/);
});

test("dispatch - unknown provider type, automator type and task name fail with status 1", async (t) => {
  const provider = await run(t, { taskName: "CREATE", config: { provider: { name: "x", providertype: "aws", provisioner: {} } } });
  t.is(provider.result.status, 1);
  t.regex(provider.result.stderr!, /unknown provider type aws/);
  const automator = await run(t, {
    taskName: "START",
    config: { service: { name: "db", action: { type: "docker", fields: {} } } },
  });
  t.is(automator.result.status, 1);
  t.regex(automator.result.stderr!, /unknown automator type docker/);
  const noService = await run(t, { taskName: "STOP" });
  t.is(noService.result.status, 1);
  t.regex(noService.result.stderr!, /has no service action/);
  const unknown = await run(t, { taskName: "REBOOT" as TaskMessage["taskName"] });
  t.is(unknown.result.status, 1);
  t.regex(unknown.result.stderr!, /unknown task REBOOT/);
});

test("dispatch - a plugin exception is a failed result, not a crash", async (t) => {
  const action = await run(t, { taskName: "INSTALL", config: { service: { name: "s", action: { type: "throwing", fields: {} } } } });
  t.is(action.result.status, 1);
  t.regex(action.result.stderr!, /RangeError: action exploded/);
  const boot = await run(t, { taskName: "BOOTSTRAP", config: { automators: ["throwing"] } });
  t.is(boot.result.status, 1);
  t.regex(boot.result.stderr!, /bootstrap exploded/);
  // The loops are still alive.
  t.is((await run(t, { taskName: "CREATE" })).result.status, 0);
});

test("dispatch - stdout and stderr keep the last 2048 characters", async (t) => {
  const { result } = await run(t, shellAction({ script: "head -c 5000 /dev/zero | tr '\\0' a; printf END" }));
  t.is(result.status, 0);
  t.true(result.stdout!.startsWith("[snipped]"));
  t.true(result.stdout!.endsWith("aEND"));
  t.is(result.stdout!.length, "[snipped]".length + 2048);
});

test("protocol - a result is published, then the task is acked", async (t) => {
  const { task } = await run(t, { taskName: "CREATE" });
  const jsm = await jetstreamManager(t.context.nc);
  const consumer = await ensureTaskConsumer(t.context.nc, t.context.tenant);
  await eventually(
    async () => {
      const info = await jsm.consumers.info(streams.tasks, consumer);
      return info.num_ack_pending === 0 && info.num_pending === 0;
    },
    { what: "the task acked" },
  );
  const left = await jsm.streams.info(streams.tasks, { subjects_filter: taskSubject(t.context.tenant) });
  t.is(left.state.subjects?.[taskSubject(t.context.tenant)] ?? 0, 0, "work queue emptied");
  t.truthy(await readResult(t.context.nc, task));
});

test("protocol - a malformed message is dropped and the loops go on", async (t) => {
  await jetstream(t.context.nc).publish(taskSubject(t.context.tenant), new TextEncoder().encode("not msgpack {"));
  await jetstream(t.context.nc).publish(taskSubject(t.context.tenant), new Uint8Array([0x81, 0xa1, 0x61, 0x01])); // {a: 1}
  const { result } = await run(t, { taskName: "CREATE" });
  t.is(result.status, 0);
});
