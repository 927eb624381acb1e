/**
 * Crash test of a provisioner: a provisioner child process holds a long task and is killed with SIGKILL; the task
 * is redelivered (after its ack wait) to the in-process provisioner, which finishes it, and the cluster becomes
 * active. The time from the kill to the task running elsewhere is measured from the task's own log lines.
 */
import anyTest, { type TestFn } from "ava";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buckets, kvKey, type ProvisionerRecord } from "@corral/contracts";
import { openBucket, readValue } from "@corral/shared";
import { eventually } from "../helpers/eventually.js";
import { createCluster, createClusterCatalog, waitForStatus } from "../helpers/cluster-fixture.js";
import { clusterProblems, openClusterState } from "../helpers/cluster-state.js";
import { createProcessSet, startProvisionerProcess, type ProcessSet } from "../helpers/processes.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

const test = anyTest as TestFn<{ sys: TestSystem; procs: ProcessSet; dir: string }>;

test.before(async (t) => {
  t.context.procs = createProcessSet();
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-crash-"));
  await chmod(t.context.dir, 0o1777); // sandboxed actions (their tenant's uid) append their log here
  t.context.sys = await startSystem({ clusters: 1, provisioners: 1, reconcileIntervalMs: 500 });
});

test.after.always(async (t) => {
  await t.context.procs?.stopAll();
  await t.context.sys?.stop();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
});

/** A line the install action writes: `start|end <provisioner> <taskId> <dispatch> <ms>`. */
interface LogLine {
  what: "start" | "end";
  provisioner: string;
  taskId: string;
  at: number;
}

async function readLog(path: string): Promise<LogLine[]> {
  const text = await readFile(path, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [what, provisioner, taskId, _dispatch, at] = l.split(" ");
      return { what: what as LogLine["what"], provisioner: provisioner ?? "", taskId: taskId ?? "", at: Number(at) };
    });
}

test("crash - a provisioner killed while it holds a long task: another provisioner runs it, the cluster becomes active", async (t) => {
  t.timeout(60_000);
  const { sys, procs, dir } = t.context;
  const childId = "crash-child";
  const inProcessId = sys.provisioners[0]?.id ?? "";
  const registry = await openBucket(sys.nc, buckets.provisioners);
  const workersOf = async (id: string, tenant: string) =>
    (await readValue<ProvisionerRecord>(registry, kvKey(id)))?.value.usage[tenant] ?? 0;
  await procs.start(() =>
    startProvisionerProcess({ natsUrl: sys.nats.url, id: childId, capacity: 2, workDir: join(dir, "child-work") }),
  );

  // The install action: on the child it lasts until its provisioner dies (then it ends without a word, so a
  // killed provisioner leaves no process behind); elsewhere it is quick.
  const log = join(dir, "install.log");
  const line = (what: string) => `echo "${what} $CORRAL_PROVISIONER_ID $CORRAL_TASK_ID $CORRAL_DISPATCH $(date +%s%3N)" >> ${log}`;
  const install = [
    line("start"),
    // Whether the provisioner lives, by its /proc entry: a sandboxed action may not signal it (kill -0).
    `if [ "$CORRAL_PROVISIONER_ID" = "${childId}" ]; then i=0; while [ $i -lt 400 ] && [ -d /proc/$PPID ]; do sleep 0.1; i=$((i+1)); done; [ -d /proc/$PPID ] || exit 1; fi`,
    line("end"),
  ].join("; ");
  // Two workers: the balancer spreads them, one on each provisioner.
  const catalog = await createClusterCatalog(sys.baseUrl, { workers: 2, services: [{ name: "slow", actions: { install } }] });
  await eventually(async () => (await workersOf(childId, catalog.tenant)) === 1 && (await workersOf(inProcessId, catalog.tenant)) === 1, {
    what: "one worker on each provisioner",
    timeoutMs: 10_000,
  });

  const id = await createCluster(sys.baseUrl, catalog, 4);
  const held = await eventually(async () => (await readLog(log)).find((l) => l.what === "start" && l.provisioner === childId) ?? false, {
    what: "the child provisioner running an install",
    timeoutMs: 20_000,
  });
  const child = procs.all().find((p) => p.name.includes(childId));
  const killedAt = Date.now();
  t.is((await child?.kill("SIGKILL"))?.signal, "SIGKILL");

  const rerun = await eventually(
    async () => (await readLog(log)).find((l) => l.what === "start" && l.taskId === held.taskId && l.provisioner === inProcessId) ?? false,
    { what: `task ${held.taskId} running on ${inProcessId}`, timeoutMs: 40_000, intervalMs: 100 },
  );
  const failoverMs = rerun.at - killedAt;
  t.log(`task ${held.taskId}: killed with the child at +0 ms, running on ${inProcessId} at +${failoverMs} ms`);
  t.true(failoverMs < 30_000, `failover took ${failoverMs} ms`);

  const status = await waitForStatus(sys.baseUrl, catalog, id, "active", 20_000);
  t.is(status.stepscompleted, status.stepstotal);
  t.deepEqual(await clusterProblems(await openClusterState(sys.nc), id, "active"), []);
  // Each install ended exactly once (the killed run never ended), all on the surviving provisioner.
  const ends = (await readLog(log)).filter((l) => l.what === "end" && l.taskId.startsWith(`${id}-`));
  t.is(ends.length, 4);
  t.is(new Set(ends.map((l) => l.taskId)).size, 4);
  t.true(ends.every((l) => l.provisioner === inProcessId));
});
