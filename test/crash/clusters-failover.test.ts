/**
 * Two clusters-service processes share the work; one is killed with SIGKILL mid-create and is not restarted. The
 * survivor must finish every cluster on its own (results the dead one held come back after the consumer's ack
 * wait; dispatches it decided but had not published are published again by the survivor's reconciler), with every
 * task carried out once.
 */
import anyTest, { type TestFn } from "ava";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import { connectNats, silentLogger } from "@corral/shared";
import { startProvisioner, type RunningProvisioner } from "@corral/provisioner";
import { eventually } from "../helpers/eventually.js";
import { createCluster, createClusterCatalog, waitForStatus } from "../helpers/cluster-fixture.js";
import { clusterProblems, openClusterState } from "../helpers/cluster-state.js";
import { createProcessSet, startClustersProcess, type ProcessSet } from "../helpers/processes.js";
import { createExecutionLog, type ExecutionLog } from "../helpers/recording-plugins.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

interface Context {
  sys: TestSystem;
  procs: ProcessSet;
  nc: NatsConnection;
  provisioner: RunningProvisioner;
  log: ExecutionLog;
  dir: string;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const sys = (t.context.sys = await startSystem({ requestTimeoutMs: 5_000 }));
  t.context.procs = createProcessSet();
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-failover-"));
  t.context.log = createExecutionLog();
  t.context.nc = await connectNats({ url: sys.nats.url, name: "failover-provisioner" });
  t.context.provisioner = await startProvisioner({
    nc: t.context.nc,
    log: silentLogger,
    id: "failover-p0",
    capacity: 12,
    workDir: t.context.dir,
    plugins: t.context.log.plugins(),
  });
});

test.after.always(async (t) => {
  await t.context.procs?.stopAll();
  await t.context.provisioner?.stop();
  await t.context.nc?.drain().catch(() => {});
  await t.context.sys?.stop();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
});

test("crash - one of two clusters processes killed mid-create: the other finishes every cluster, every task once", async (t) => {
  t.timeout(60_000);
  const { sys, procs, log } = t.context;
  const [victim] = await Promise.all(
    ["clusters-a", "clusters-b"].map((name) => procs.start(() => startClustersProcess({ natsUrl: sys.nats.url, name }))),
  );
  const catalog = await createClusterCatalog(sys.baseUrl, {
    workers: 12,
    sim: { delay_ms: "250" },
    services: [
      { name: "base", actions: { install: "sleep 0.1", configure: "sleep 0.1", start: "sleep 0.1" } },
      { name: "app", actions: { install: "sleep 0.1", start: "sleep 0.1" } },
    ],
  });
  const ids = await Promise.all(Array.from({ length: 6 }, () => createCluster(sys.baseUrl, catalog, 3)));
  const state = await openClusterState(sys.nc);
  const completed = async () => {
    let sum = 0;
    for (const id of ids) sum += (await state.plan(id, `${id}-001`))?.value.actor.context.completed ?? 0;
    return sum;
  };
  const atKill = await eventually(async () => ((await completed()) >= 40 ? completed() : false), {
    what: "the creates under way",
    timeoutMs: 20_000,
    intervalMs: 20,
  });
  t.is((await victim?.kill("SIGKILL"))?.signal, "SIGKILL");
  const killedAt = Date.now();

  await Promise.all(ids.map((id) => waitForStatus(sys.baseUrl, catalog, id, "active", 50_000)));
  t.log(`killed one instance after ${atKill} tasks; all ${ids.length} clusters active ${Date.now() - killedAt} ms later`);
  const runs = log.byTask();
  for (const id of ids) {
    t.deepEqual(await clusterProblems(state, id, "active"), [], `cluster ${id}`);
    const plan = (await state.plan(id, `${id}-001`))?.value;
    if (!plan) return void t.fail(`plan of ${id} missing`);
    for (const task of await state.planTasks(plan)) t.is(runs.get(task.taskId)?.length ?? 0, 1, `task ${task.taskId} ran once`);
  }
});
