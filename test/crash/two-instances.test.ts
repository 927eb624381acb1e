/**
 * Two instances of the clusters service side by side drive several clusters at once: requests, results and
 * reconciliation are shared between them (queue group, one durable results consumer, compare-and-set on every
 * actor). Every cluster must become active with every task carried out once and its plan consistent.
 *
 * Run twice: in one process (`startSystem({ clusters: 2 })`), where the instances share the per-process turn-taking
 * of `modifyValue` and so never race each other's compare-and-set; and as two child processes, where they do.
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import { connectNats, silentLogger } from "@corral/shared";
import { startProvisioner, type RunningProvisioner } from "@corral/provisioner";
import { createCluster, createClusterCatalog, waitForStatus } from "../helpers/cluster-fixture.js";
import { clusterProblems, openClusterState, type ClusterRecord } from "../helpers/cluster-state.js";
import { createProcessSet, startClustersProcess, type ProcessSet } from "../helpers/processes.js";
import { createExecutionLog } from "../helpers/recording-plugins.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

interface Running {
  sys?: TestSystem;
  procs: ProcessSet;
  connections: NatsConnection[];
  provisioners: RunningProvisioner[];
  dir?: string;
}
const test = anyTest as TestFn<{ running: Running[] }>;

test.before((t) => {
  t.context.running = [];
});

test.after.always(async (t) => {
  for (const r of t.context.running ?? []) {
    await Promise.all(r.provisioners.map((p) => p.stop()));
    await Promise.all(r.connections.map((c) => c.drain().catch(() => {})));
    await r.procs.stopAll();
    await r.sys?.stop();
    if (r.dir) await rm(r.dir, { recursive: true, force: true });
  }
});

/** Messages each clusters-service connection has sent to the server so far, by connection id. */
async function messagesSent(monitorUrl: string, names: readonly string[]): Promise<Record<string, number>> {
  const body = (await (await fetch(`${monitorUrl}/connz?limit=1024`)).json()) as {
    connections: Array<{ cid: number; name?: string; in_msgs: number }>;
  };
  const out: Record<string, number> = {};
  for (const c of body.connections) if (c.name && names.includes(c.name)) out[`${c.name}#${c.cid}`] = c.in_msgs;
  return out;
}

async function concurrentCreates(t: ExecutionContext<{ running: Running[] }>, asProcesses: boolean) {
  t.timeout(60_000);
  const r: Running = { procs: createProcessSet(), connections: [], provisioners: [] };
  t.context.running.push(r);
  const sys = (r.sys = await startSystem({ clusters: asProcesses ? 0 : 2, reconcileIntervalMs: 1000 }));
  if (asProcesses) {
    for (const name of ["clusters-a", "clusters-b"]) await r.procs.start(() => startClustersProcess({ natsUrl: sys.nats.url, name }));
  }
  const dir = (r.dir = await mkdtemp(join(tmpdir(), "corral-two-")));
  const log = createExecutionLog();
  for (const id of ["two-p0", "two-p1"]) {
    const nc = await connectNats({ url: sys.nats.url, name: id });
    r.connections.push(nc);
    r.provisioners.push(await startProvisioner({ nc, log: silentLogger, id, capacity: 8, workDir: join(dir, id), plugins: log.plugins() }));
  }
  const catalog = await createClusterCatalog(sys.baseUrl, {
    workers: 16,
    sim: { delay_ms: "20" },
    services: [
      { name: "base", actions: { install: "true", configure: "true", start: "true" } },
      { name: "app", actions: { install: "true", start: "true" } },
    ],
  });
  const names = asProcesses ? ["corral-clusters"] : ["clusters-0", "clusters-1"];
  const before = await messagesSent(sys.nats.monitorUrl, names);

  const ids = await Promise.all(Array.from({ length: 12 }, (_, i) => createCluster(sys.baseUrl, catalog, 2 + (i % 5))));
  t.is(new Set(ids).size, ids.length);
  await Promise.all(ids.map((id) => waitForStatus(sys.baseUrl, catalog, id, "active", 45_000)));

  const state = await openClusterState(sys.nc);
  const runs = log.byTask();
  for (const id of ids) {
    t.deepEqual(await clusterProblems(state, id, "active"), [], `cluster ${id}`);
    const cluster = (await state.cluster(id))?.value as ClusterRecord;
    t.deepEqual(cluster.jobs, [`${id}-001`]);
    const plan = (await state.plan(id, `${id}-001`))?.value;
    if (!plan) return void t.fail(`plan of ${id} missing`);
    for (const task of await state.planTasks(plan)) {
      t.is(runs.get(task.taskId)?.length ?? 0, 1, `task ${task.taskId} (${task.taskName} ${task.service}) ran once`);
    }
  }
  t.is(log.executions.length, runs.size, "no task ran twice");
  // Later stages are published from what the dispatching instance knows of the nodes
  // (services/clusters/src/actor/dispatch-memory.ts): every task after a node's CREATE must carry that CREATE's
  // result, whichever instance merged it.
  for (const e of log.executions.filter((x) => x.taskName !== "CREATE")) {
    const created = log.executions
      .filter((c) => c.taskName === "CREATE" && c.nodeId === e.nodeId && c.status === 0 && (c.endedAt ?? Infinity) <= e.startedAt)
      .at(-1);
    t.truthy(created?.providerid, `node ${e.nodeId} was created before its ${e.taskName}`);
    t.is(e.carriedProviderid, created?.providerid, `${e.taskName} of ${e.nodeId} carried its node's CREATE result`);
  }

  // Both instances took part (each sent far more than idle reconciling and pulling would).
  const after = await messagesSent(sys.nats.monitorUrl, names);
  const sent = Object.fromEntries(Object.entries(after).map(([name, n]) => [name, n - (before[name] ?? 0)]));
  t.log(`messages sent per clusters instance during the run: ${JSON.stringify(sent)}; tasks run: ${log.executions.length}`);
  t.is(Object.keys(sent).length, 2);
  for (const n of Object.values(sent)) t.true(n > 100, JSON.stringify(sent));
}

test.serial("two instances - in one process: 12 concurrent creates all active, every task once, plans consistent", (t) =>
  concurrentCreates(t, false),
);
test.serial("two instances - as two processes: 12 concurrent creates all active, every task once, plans consistent", (t) =>
  concurrentCreates(t, true),
);
