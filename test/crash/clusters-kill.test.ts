/**
 * Crash tests of the clusters service: it runs as a real child process and is killed with SIGKILL in the middle of
 * a cluster create, then started again. The cluster must still become active, with every task carried out exactly
 * once. Counted on the provisioner side (an in-process provisioner whose plugins record every execution, and shell
 * actions appending a line per run to a file) and checked in the stored state.
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { consumers, decode, fromKeyToken, streams } from "@corral/contracts";
import { connectNats, silentLogger } from "@corral/shared";
import type { NatsConnection } from "@nats-io/transport-node";
import { KvWatchInclude } from "@nats-io/kv";
import { jetstreamManager } from "@nats-io/jetstream";
import { startProvisioner, type RunningProvisioner } from "@corral/provisioner";
import { eventually } from "../helpers/eventually.js";
import { createCluster, createClusterCatalog, waitForStatus, type ClusterCatalog } from "../helpers/cluster-fixture.js";
import {
  clusterProblems,
  openClusterState,
  staleUnpublished,
  type ClusterRecord,
  type ClusterState,
  type PlanRecord,
} from "../helpers/cluster-state.js";
import { createProcessSet, startClustersProcess, type ProcessSet, type ServiceProcess } from "../helpers/processes.js";
import { createExecutionLog, type ExecutionLog } from "../helpers/recording-plugins.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

interface Context {
  sys: TestSystem;
  procs: ProcessSet;
  clusters: ServiceProcess;
  provisioner: RunningProvisioner;
  provisionerNc: NatsConnection;
  log: ExecutionLog;
  catalog: ClusterCatalog;
  state: ClusterState;
  dir: string;
  execLog: string;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  const sys = await startSystem({ requestTimeoutMs: 5_000 });
  t.context.sys = sys;
  t.context.procs = createProcessSet();
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-crash-"));
  await chmod(t.context.dir, 0o1777); // sandboxed actions (their tenant's uid) append their log here
  t.context.execLog = join(t.context.dir, "executions.log");
  t.context.log = createExecutionLog();
  t.context.provisionerNc = await connectNats({ url: sys.nats.url, name: "crash-provisioner" });
  t.context.provisioner = await startProvisioner({
    nc: t.context.provisionerNc,
    log: silentLogger,
    id: "crash-p0",
    capacity: 8,
    workDir: join(t.context.dir, "work"),
    plugins: t.context.log.plugins(),
  });
  t.context.clusters = await t.context.procs.start(() => startClustersProcess({ natsUrl: sys.nats.url }));
  // One line per execution of a service action, written by the action itself.
  const script = (what: string) => `sleep 0.2; echo "$CORRAL_TASK_ID $CORRAL_DISPATCH ${what}" >> ${t.context.execLog}`;
  t.context.catalog = await createClusterCatalog(sys.baseUrl, {
    workers: 6,
    sim: { delay_ms: "300" },
    services: [
      { name: "base", actions: { install: script("install base"), configure: script("configure base"), start: script("start base") } },
      { name: "app", actions: { install: script("install app"), start: script("start app") } },
    ],
  });
  t.context.state = await openClusterState(sys.nc);
});

test.after.always(async (t) => {
  await t.context.procs?.stopAll();
  await t.context.provisioner?.stop();
  await t.context.provisionerNc?.drain().catch(() => {});
  await t.context.sys?.stop();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
});

/** Kills the clusters process with SIGKILL and starts a new one. */
async function killAndRestart(t: ExecutionContext<Context>, beforeRestart?: () => Promise<void>): Promise<void> {
  const exit = await t.context.clusters.kill("SIGKILL");
  t.is(exit.signal, "SIGKILL");
  await beforeRestart?.();
  t.context.clusters = await t.context.procs.start(() => t.context.clusters.respawn());
}

/** Every task of the cluster's plan ran exactly once on the provisioner side; each node was created once. */
async function assertRanOnce(t: ExecutionContext<Context>, clusterId: string): Promise<void> {
  const { state, log } = t.context;
  const cluster = (await state.cluster(clusterId))?.value as ClusterRecord;
  const plan = (await state.plan(clusterId, cluster.actor.context.planId))?.value;
  if (!plan) return void t.fail(`plan of ${clusterId} missing`);
  const stale = staleUnpublished(plan);
  // Known bug, pinned in stale-publish.test.ts: a kill between publishing and recording it can leave this behind.
  if (stale) t.log(`stale unpublished entry left in the finished plan: ${JSON.stringify(stale)}`);
  const tasks = await state.planTasks(plan);
  const runs = log.byTask();
  for (const task of tasks) {
    const ran = runs.get(task.taskId) ?? [];
    t.is(ran.length, 1, `task ${task.taskId} (${task.taskName} ${task.service} on ${task.nodeId}) ran ${ran.length} times`);
  }
  t.is(log.executions.filter((e) => e.clusterId === clusterId).length, tasks.length, "no execution outside the plan");
  // The provider's CREATE: one per node, and the stored providerid is the one that single run returned.
  const nodes = await state.nodes(cluster);
  for (const node of nodes) {
    const creates = log.executions.filter((e) => e.nodeId === node.id && e.taskName === "CREATE");
    t.is(creates.length, 1, `node ${node.id} created ${creates.length} times`);
    t.is(node.results["providerid"], creates[0]?.providerid, `node ${node.id} providerid`);
  }
  // Shell actions' own record: one line per service task.
  const lines = (await readFile(t.context.execLog, "utf8").catch(() => "")).split("\n").filter((l) => l.startsWith(plan.id + "-"));
  const perTask = new Map<string, number>();
  for (const l of lines) perTask.set(l.split(" ")[0] ?? "", (perTask.get(l.split(" ")[0] ?? "") ?? 0) + 1);
  const serviceTasks = tasks.filter((x) => x.service !== "");
  t.is(perTask.size, serviceTasks.length, "every service task wrote its line");
  for (const [taskId, n] of perTask) t.is(n, 1, `shell action of ${taskId} ran ${n} times`);
}

test.serial("crash - clusters service killed mid-create and restarted: the cluster becomes active, every task ran once", async (t) => {
  t.timeout(60_000);
  const { sys, catalog, state } = t.context;
  const id = await createCluster(sys.baseUrl, catalog, 3);
  // Some stages done, the next in flight.
  const progressAtKill = await eventually(
    async () => {
      const plan = (await state.plan(id, `${id}-001`))?.value;
      return plan && plan.actor.context.completed >= 6 ? plan.actor.context.completed : false;
    },
    { what: "two stages of the create done", timeoutMs: 20_000, intervalMs: 20 },
  );
  await killAndRestart(t, async () => {
    // While the service is down, the provisioner finishes what it holds; the results wait in the stream.
    await eventually(() => t.context.log.executions.every((e) => e.endedAt !== undefined), {
      what: "running tasks finished",
      timeoutMs: 10_000,
    });
    // Results the dead process had received but not acked come back only after the consumer's ack wait.
    const info = await (await jetstreamManager(sys.nc)).consumers.info(streams.results, consumers.results);
    t.log(`results at restart: ${info.num_ack_pending} delivered to the dead process and unacked, ${info.num_pending} undelivered`);
  });
  const killedAt = Date.now();
  const timeline: string[] = [];
  let sampling = true;
  const sampler = (async () => {
    let last = -1;
    while (sampling) {
      const c = (await state.plan(id, `${id}-001`))?.value.actor.context;
      if (c && c.completed !== last) timeline.push(`${Date.now() - killedAt}ms:${(last = c.completed)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const status = await waitForStatus(sys.baseUrl, catalog, id, "active", 45_000);
  sampling = false;
  await sampler;
  t.log(`killed after ${progressAtKill} of ${status.stepstotal} tasks; then ${timeline.join(" ")}`);
  t.is(status.stepscompleted, status.stepstotal);
  t.deepEqual(await clusterProblems(state, id, "active"), []);
  await assertRanOnce(t, id);
});

test.serial("crash - clusters service killed as soon as a stage is decided: the stage is published again, tasks still ran once", async (t) => {
  t.timeout(60_000);
  const { sys, catalog, state } = t.context;
  // Cluster numbers come in blocks per process: the new cluster is the first one not there before.
  const existing = new Set<string>();
  for await (const k of await state.kv.clusters.keys()) existing.add(k);
  // The moment the plan stores "stage 1 decided, not yet confirmed published", kill.
  const watch = await state.kv.plans.watch({ key: ">", include: KvWatchInclude.UpdatesOnly });
  let decided: string | undefined;
  let decidedCluster: string | undefined;
  const killed = (async () => {
    for await (const e of watch) {
      const clusterId = e.key.split(".")[0] ?? "";
      if (e.operation !== "PUT" || existing.has(clusterId)) continue;
      const c = decode<PlanRecord>(e.value).actor.context;
      if (c.unpublished && c.unpublished.stages.some((s) => s >= 1)) {
        await t.context.clusters.kill("SIGKILL");
        decided = JSON.stringify(c.unpublished);
        decidedCluster = clusterId;
        break;
      }
    }
  })();
  const id = await createCluster(sys.baseUrl, catalog, 3);
  await killed;
  watch.stop();
  t.is(decidedCluster, id);
  t.log(`killed with ${decided} outstanding`);
  t.context.clusters = await t.context.procs.start(() => t.context.clusters.respawn());
  const status = await waitForStatus(sys.baseUrl, catalog, id, "active", 45_000);
  t.is(status.stepscompleted, status.stepstotal);
  t.deepEqual(await clusterProblems(state, id, "active"), []);
  await assertRanOnce(t, id);
  const republished = t.context.clusters.output().some((l) => l.includes("publishing dispatches again") && l.includes(id));
  t.log(republished ? "the new process's reconciler published the stage again" : "the stage had been confirmed before the kill");
});

test.serial("crash - clusters service killed right after committing a new cluster: it still becomes active, tasks ran once", async (t) => {
  t.timeout(60_000);
  const { sys, catalog, state } = t.context;
  const seen = new Set<string>();
  for await (const k of await state.kv.clusters.keys()) seen.add(k);
  // Kill the moment the cluster record (the create's commit point) appears.
  const watch = await state.kv.clusters.watch({ include: KvWatchInclude.UpdatesOnly });
  let committed: string | undefined;
  const killed = (async () => {
    for await (const e of watch) {
      if (e.operation !== "PUT" || seen.has(e.key)) continue;
      committed = fromKeyToken(e.key);
      const record = decode<ClusterRecord>(e.value);
      t.log(`cluster ${record.id} committed; killing the clusters service`);
      await t.context.clusters.kill("SIGKILL");
      break;
    }
  })();
  // The request itself may die with the process (the gateway answers 504); the cluster exists all the same.
  const answered = createCluster(sys.baseUrl, catalog, 3).then(
    (id) => ({ id }),
    (err: unknown) => ({ err: String(err) }),
  );
  await killed;
  watch.stop();
  t.truthy(committed);
  const id = committed as string;
  t.log(`create answered: ${JSON.stringify(await answered)}`);
  t.context.clusters = await t.context.procs.start(() => t.context.clusters.respawn());
  const status = await waitForStatus(sys.baseUrl, catalog, id, "active", 45_000);
  t.is(status.stepscompleted, status.stepstotal);
  t.deepEqual(await clusterProblems(state, id, "active"), []);
  await assertRanOnce(t, id);
});
