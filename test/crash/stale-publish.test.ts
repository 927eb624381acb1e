/**
 * Regression tests for two bugs found by killing the clusters service between publishing a stage's tasks and
 * recording the publication (`dispatch.published`), which leaves the stage listed in the plan's `unpublished`.
 * The state is written directly (the window is a few milliseconds wide), with the clusters service killed first.
 *
 * 1. The stale entry must be dropped once the plan moves past the stage (plan-machine.ts `pruneUnpublished`).
 * 2. A stage republished after the task stream's duplicate window (10 min) arrives as new messages; the worker
 *    must still not run a task that already has a result (provisioner/src/worker-loop.ts checks on every delivery).
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { encode, kvKey, streams } from "@corral/contracts";
import { connectNats, silentLogger } from "@corral/shared";
import { startProvisioner, type RunningProvisioner } from "@corral/provisioner";
import { eventually } from "../helpers/eventually.js";
import { createCluster, createClusterCatalog, waitForStatus, type ClusterCatalog } from "../helpers/cluster-fixture.js";
import { openClusterState, staleUnpublished, type ClusterState, type PlanRecord } from "../helpers/cluster-state.js";
import { createProcessSet, startClustersProcess, type ProcessSet, type ServiceProcess } from "../helpers/processes.js";
import { createExecutionLog, type ExecutionLog } from "../helpers/recording-plugins.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

interface Setup {
  sys: TestSystem;
  procs: ProcessSet;
  clusters: ServiceProcess;
  nc: NatsConnection;
  provisioner: RunningProvisioner;
  log: ExecutionLog;
  catalog: ClusterCatalog;
  state: ClusterState;
  dir: string;
}
const test = anyTest as TestFn<{ setups: Setup[] }>;

test.before((t) => {
  t.context.setups = [];
});

test.after.always(async (t) => {
  for (const s of t.context.setups ?? []) {
    await s.procs.stopAll();
    await s.provisioner.stop();
    await s.nc.drain().catch(() => {});
    await s.sys.stop();
    await rm(s.dir, { recursive: true, force: true });
  }
});

async function setUp(
  t: ExecutionContext<{ setups: Setup[] }>,
  options: { duplicateWindowMs?: number; sim: Record<string, string> },
): Promise<Setup> {
  const sys = await startSystem();
  const procs = createProcessSet();
  const dir = await mkdtemp(join(tmpdir(), "corral-stale-"));
  if (options.duplicateWindowMs !== undefined) {
    // Set before any clusters service starts (startSystem made the stream, as the launcher does).
    const jsm = await jetstreamManager(sys.nc);
    const { config } = await jsm.streams.info(streams.tasks);
    await jsm.streams.update(streams.tasks, { ...config, duplicate_window: options.duplicateWindowMs * 1_000_000 });
  }
  const log = createExecutionLog();
  const nc = await connectNats({ url: sys.nats.url, name: "stale-provisioner" });
  const provisioner = await startProvisioner({ nc, log: silentLogger, id: "stale-p0", capacity: 8, workDir: dir, plugins: log.plugins() });
  const clusters = await procs.start(() => startClustersProcess({ natsUrl: sys.nats.url }));
  const catalog = await createClusterCatalog(sys.baseUrl, { workers: 4, sim: options.sim, services: [{ name: "base", actions: { install: "true" } }] });
  const setup = { sys, procs, clusters, nc, provisioner, log, catalog, state: await openClusterState(sys.nc), dir };
  t.context.setups.push(setup);
  return setup;
}

/**
 * Kills the clusters service, then marks `stage` as decided but never recorded published, since `since`. What the
 * plan already lists stays listed: the process may have been killed before it published the stage it had just
 * entered (under load that window is tens of milliseconds), and dropping that entry would leave the stage unpublished
 * for good, which no real crash does.
 */
async function crashBetweenPublishAndRecord(s: Setup, clusterId: string, stage: number, since: number): Promise<void> {
  await s.clusters.kill("SIGKILL");
  const found = await s.state.plan(clusterId, `${clusterId}-001`);
  if (!found) throw new Error("plan missing");
  const plan: PlanRecord = found.value;
  const c = plan.actor.context;
  const stages = [...new Set([...(c.unpublished?.stages ?? []), stage])];
  const unpublished = { stages, tasks: c.unpublished?.tasks ?? [], since };
  const next: PlanRecord = { ...plan, actor: { ...plan.actor, context: { ...c, unpublished } } };
  await s.state.kv.plans.update(kvKey(clusterId, plan.id), encode(next), found.revision);
  s.clusters = await s.procs.start(() => s.clusters.respawn());
}

const atStage = (s: Setup, id: string, stage: number) =>
  eventually(async () => ((await s.state.plan(id, `${id}-001`))?.value.actor.context.stage ?? -1) === stage, {
    what: `plan of ${id} at stage ${stage}`,
    timeoutMs: 20_000,
    intervalMs: 20,
  });

test("crash - a stage recorded unpublished by a crash is dropped from the plan once it moves on", async (t) => {
  t.timeout(60_000);
  // CONFIRM takes 2 s: killed while it runs, the plan ends within the reconciler's 10 s republish delay.
  const s = await setUp(t, { sim: { delay_confirm_ms: "2000" } });
  const id = await createCluster(s.sys.baseUrl, s.catalog, 2);
  await atStage(s, id, 1);
  await crashBetweenPublishAndRecord(s, id, 1, Date.now());
  await waitForStatus(s.sys.baseUrl, s.catalog, id, "active", 30_000);
  const plan = (await s.state.plan(id, `${id}-001`))?.value;
  t.is(plan?.actor.value, "succeeded");
  t.is(plan && staleUnpublished(plan), undefined, "a finished plan lists a stage as unpublished");
});

test("crash - a stage republished after the task stream's duplicate window does not run its tasks again", async (t) => {
  t.timeout(60_000);
  // CONFIRM takes 8 s, so the plan is still running when the new process's reconciler looks (after 5 s).
  const s = await setUp(t, { duplicateWindowMs: 1_000, sim: { delay_confirm_ms: "8000" } });
  const id = await createCluster(s.sys.baseUrl, s.catalog, 2);
  await atStage(s, id, 1);
  // Stage 0 (CREATE) was published and has run; the crash lost only the record of its publication, long ago.
  await crashBetweenPublishAndRecord(s, id, 0, Date.now() - 60_000);
  await waitForStatus(s.sys.baseUrl, s.catalog, id, "active", 45_000);
  const creates = s.log.executions.filter((e) => e.clusterId === id && e.taskName === "CREATE");
  t.log(`CREATE executions: ${creates.map((e) => `${e.taskId}.${e.dispatch} ${e.providerid ?? ""}`).join(", ")}`);
  t.is(creates.length, 2, "each of the 2 nodes created once");
});
