/**
 * End-to-end task throughput: 200 clusters of 5 nodes created at once with zero task delays (sim provider), timed
 * from the first create request until every cluster is active, in both JetStream fsync modes; beside each, the raw
 * acknowledged-publish rate of the same server (32 in flight, a task-sized msgpack payload) and the CPU each
 * process used. Writes bench/results/clusters-throughput.json.
 *
 * Run: node --import=tsx bench/clusters/throughput.ts
 * Each run records the machine's speed just before it (machineSpeedMicros in lib.ts), since the shared cores drift.
 * Env: BENCH_CLUSTERS (200), BENCH_NODES (5), BENCH_MODES ("lazy,always"), BENCH_CLUSTERS_PROCS (1),
 *      BENCH_REPEAT (3: runs of each mode on one server, the median reported),
 *      BENCH_NATS_NODES ("1,3": each mode on one nats-server and on a loopback three-node JetStream cluster at R3),
 *      BENCH_COMPARE_PROCS ("2": an extra lazy run with that many clusters-service processes),
 *      BENCH_PROVISIONERS (2), BENCH_CAPACITY (32 per provisioner), BENCH_WORKERS (64), BENCH_CREATE_CONCURRENCY (16),
 *      BENCH_SHELL_SERVICES (0: tasks are CREATE, CONFIRM, BOOTSTRAP; n: n services with a shell `true` install each),
 *      BENCH_FIT_NODES ("1,20": extra lazy runs with these cluster sizes for the per-cluster / per-task CPU split)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import type { Msg } from "@nats-io/transport-node";
import { streams, streamSubjects } from "@corral/contracts";
import { mapLimit } from "@corral/shared";
import { createCluster, createClusterCatalog } from "../../test/helpers/cluster-fixture.js";
import { createClusterClient } from "./create-client.js";
import {
  cpuMeter,
  eventsByKind,
  jetstreamWrites,
  perTask,
  machine,
  machineSpeedMicros,
  waitForQuietMachine,
  rawPublishRate,
  readPlan,
  round,
  serverCounters,
  startBenchSystem,
  trackClusters,
  writesPerTask,
  type SyncMode,
} from "./lib.js";
import { envNumber as env } from "../env.js";

const CLUSTERS = env("BENCH_CLUSTERS", 200);
const NODES = env("BENCH_NODES", 5);
const MODES = (process.env["BENCH_MODES"] ?? "lazy,always").split(",").map((s) => s.trim()) as SyncMode[];
const CLUSTERS_PROCS = env("BENCH_CLUSTERS_PROCS", 1);
const NATS_NODES = (process.env["BENCH_NATS_NODES"] ?? "1,3").split(",").filter(Boolean).map(Number);
/** An extra lazy-fsync run with this many clusters-service processes, for comparison ("" skips it). */
const COMPARE_PROCS = (process.env["BENCH_COMPARE_PROCS"] ?? "2").split(",").filter(Boolean).map(Number);
const PROVISIONERS = env("BENCH_PROVISIONERS", 2);
const CAPACITY = env("BENCH_CAPACITY", 32);
const WORKERS = env("BENCH_WORKERS", 64);
const CREATE_CONCURRENCY = env("BENCH_CREATE_CONCURRENCY", 16);
const SHELL_SERVICES = env("BENCH_SHELL_SERVICES", 0);
const TIMEOUT_MS = env("BENCH_TIMEOUT_MS", 10 * 60_000);
/**
 * Extra lazy-fsync runs with other cluster sizes, to split the CPU into a cost per cluster and a cost per task
 * (a straight-line fit of CPU per cluster against tasks per cluster). "" skips them.
 */
const FIT_NODES = (process.env["BENCH_FIT_NODES"] ?? "1,20").split(",").filter(Boolean).map(Number);
/**
 * Runs of each mode on one server; the median is reported (all of them in `repeatedRuns`): the shared cores' speed
 * drifts by a third within minutes, so one run says as much about the machine as about the code.
 */
const REPEAT = env("BENCH_REPEAT", 3);
/** A directory: the clusters and provisioner processes write V8 CPU profiles there (diagnosis). */
const CPU_PROF_DIR = process.env["BENCH_CPU_PROF_DIR"];

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

async function runMode(sync: SyncMode, nodes = NODES, clustersProcesses = CLUSTERS_PROCS, natsNodes = 1) {
  const settledMs = await waitForQuietMachine();
  const speed = machineSpeedMicros();
  const sys = await startBenchSystem({
    sync,
    natsNodes,
    clustersProcesses,
    provisioners: PROVISIONERS,
    provisionerCapacity: CAPACITY,
    ...(CPU_PROF_DIR
      ? { nodeArgs: { clusters: ["--cpu-prof", `--cpu-prof-dir=${CPU_PROF_DIR}/${sync}-clusters`], provisioners: ["--cpu-prof", `--cpu-prof-dir=${CPU_PROF_DIR}/${sync}-provisioners`] } }
      : {}),
  });
  try {
    // A cluster needs a service: without shell services, one without actions (it adds no tasks).
    const services =
      SHELL_SERVICES > 0
        ? Array.from({ length: SHELL_SERVICES }, (_, i) => ({ name: `s${i}`, actions: { install: "true" } }))
        : [{ name: "base", actions: {} }];
    const catalog = await createClusterCatalog(sys.baseUrl, { tenant: "bench", workers: WORKERS, services });
    await sys.waitForWorkers(catalog.tenant, Math.min(WORKERS, PROVISIONERS * CAPACITY));
    const tracker = await trackClusters(sys.nc);

    // Warm-up cluster; its task messages give the typical task size.
    const sizes: Msg[] = [];
    const sub = sys.nc.subscribe(streamSubjects[streams.tasks], { callback: (_err, m) => void sizes.push(m) });
    const warm = await createCluster(sys.baseUrl, catalog, nodes, "warmup");
    await tracker.waitAll([warm], "active", 60_000);
    sub.unsubscribe();
    const bySize = [...sizes].sort((a, b) => a.data.length - b.data.length);
    const typical = bySize[Math.floor(bySize.length / 2)];
    if (!typical) throw new Error("no task message seen during the warm-up");
    const rawAckedPublishesPerSecond = await rawPublishRate(sys.nc, typical.data, 32, 3_000);
    console.error(`[${sync}, ${natsNodes} server(s)] raw acked publishes/s: ${rawAckedPublishesPerSecond} (payload ${typical.data.length} B)`);

    const cpu = cpuMeter(sys);
    const counters0 = await serverCounters(sys);
    const writes0 = await jetstreamWrites(sys.nats.monitorUrl);
    const events0 = await eventsByKind(sys.nc);
    const startedAt = Date.now();
    const requested = new Map<string, number>();
    const client = createClusterClient(sys.baseUrl, CREATE_CONCURRENCY);
    const ids = await mapLimit(
      Array.from({ length: CLUSTERS }, (_, i) => i),
      CREATE_CONCURRENCY,
      async (i) => {
        const at = Date.now();
        const id = await client.create(catalog, nodes, `b${i}`);
        requested.set(id, at);
        return id;
      },
    );
    const answeredAt = Date.now();
    client.close();
    const activeAt = await tracker.waitAll(ids, "active", TIMEOUT_MS);
    const cpuUsed = cpu();
    const counters1 = await serverCounters(sys);
    tracker.stop();
    // The last results' acks and trailing events land just after the last cluster turns active.
    await new Promise((r) => setTimeout(r, 1_000));
    const writes1 = await jetstreamWrites(sys.nats.monitorUrl);
    const events1 = await eventsByKind(sys.nc);

    let tasks = 0;
    for (const id of ids) {
      const plan = await readPlan(sys.nc, id, `${id}-001`);
      tasks += plan?.stageSizes.reduce((a, b) => a + b, 0) ?? 0;
    }
    const seconds = (activeAt - startedAt) / 1000;
    const latencies = ids.map((id) => (tracker.reachedAt(id, "active") ?? 0) - (requested.get(id) ?? 0)).sort((a, b) => a - b);
    const ours = Object.entries(cpuUsed)
      .filter(([k]) => k !== "idle" && k !== "other processes on the machine")
      .reduce((a, [, v]) => a + v, 0);
    const result = {
      jetstream: sync === "always" ? "sync_interval: always" : "default (lazy fsync)",
      machineSpeedMicros: speed,
      settledMsBefore: settledMs,
      natsServers: natsNodes,
      replicas: natsNodes >= 3 ? 3 : 1,
      clustersServiceProcesses: clustersProcesses,
      clusters: CLUSTERS,
      nodesPerCluster: nodes,
      tasks,
      tasksPerCluster: tasks / CLUSTERS,
      secondsUntilAllActive: round(seconds, 2),
      tasksPerSecond: Math.round(tasks / seconds),
      secondsUntilAllCreatesAnswered: round((answeredAt - startedAt) / 1000, 2),
      clusterCreateToActiveMs: { p50: percentile(latencies, 50), p90: percentile(latencies, 90), max: latencies.at(-1) ?? 0 },
      rawAckedPublishesPerSecond,
      rawPublish: { inFlight: 32, payloadBytes: typical.data.length, seconds: 3 },
      cpuSecondsByProcess: cpuUsed,
      cpuMsPerTask: round((ours / tasks) * 1000, 2),
      natsPerTask: {
        messagesIn: round((counters1.inMsgs - counters0.inMsgs) / tasks, 1),
        messagesOut: round((counters1.outMsgs - counters0.outMsgs) / tasks, 1),
        jetstreamApiCalls: round((counters1.jsApiTotal - counters0.jsApiTotal) / tasks, 2),
      },
      jetstreamWritesPerTask: writesPerTask(writes0, writes1, tasks),
      eventsPerTask: perTask(events0, events1, tasks),
    };
    console.error(`[${sync}, ${natsNodes} server(s)] ${JSON.stringify(result)}`);
    return result;
  } finally {
    await sys.stop();
  }
}

type Run = Awaited<ReturnType<typeof runMode>>;
const speedBefore = machineSpeedMicros();
/** Every run of each server count and mode; one server's are repeated (REPEAT), modes taking turns so drift hits both. */
const runsOf = new Map<string, Run[]>();
const keep = (run: Run) => {
  const key = `${run.natsServers}/${run.jetstream}`;
  runsOf.set(key, [...(runsOf.get(key) ?? []), run]);
};
for (const natsNodes of NATS_NODES) {
  for (let repeat = 0; repeat < (natsNodes === 1 ? REPEAT : 1); repeat++) {
    for (const mode of MODES) keep(await runMode(mode, NODES, CLUSTERS_PROCS, natsNodes));
  }
}
/** The median run of each (the lower middle one of an even count), by tasks per second. */
const runs: Run[] = [...runsOf.values()].map((all) => [...all].sort((a, b) => a.tasksPerSecond - b.tasksPerSecond)[Math.floor((all.length - 1) / 2)]!);
const repeatedRuns = [...runsOf.values()]
  .filter((all) => all.length > 1)
  .map((all) => ({
    natsServers: all[0]!.natsServers,
    jetstream: all[0]!.jetstream,
    tasksPerSecond: all.map((r) => r.tasksPerSecond),
    machineSpeedMicros: all.map((r) => r.machineSpeedMicros),
    jetstreamWritesPerTask: all.map((r) => r.jetstreamWritesPerTask.total),
  }));
const compareRuns: Run[] = [];
if (MODES.includes("lazy")) for (const procs of COMPARE_PROCS) if (procs !== CLUSTERS_PROCS) compareRuns.push(await runMode("lazy", NODES, procs));
const fitRuns: Run[] = [];
if (MODES.includes("lazy")) for (const nodes of FIT_NODES) if (nodes !== NODES) fitRuns.push(await runMode("lazy", nodes));

/** CPU (all our processes) per cluster = perCluster + perTask * tasks per cluster, fitted over the lazy runs. */
function costModel() {
  const points = [...runs.filter((r) => r.jetstream.startsWith("default") && r.natsServers === 1), ...fitRuns].map((r) => ({
    x: r.tasksPerCluster,
    y: (r.cpuMsPerTask * r.tasks) / r.clusters,
  }));
  if (points.length < 2) return undefined;
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  const slope = points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0) / points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  return {
    cpuMsPerCluster: round(my - slope * mx, 1),
    cpuMsPerTask: round(slope, 2),
    points: points.map((p) => ({ tasksPerCluster: p.x, cpuMsPerCluster: round(p.y, 1) })),
    note: "fitted over the lazy-fsync runs; CPU of nats-server, clusters services, provisioners and this process",
  };
}
const results = {
  date: new Date().toISOString(),
  machine: machine(),
  machineSpeedMicros: { before: speedBefore, after: machineSpeedMicros(), what: "one core's us per msgpack and JSON round trip of a task-sized object (lower is faster): runs taken at different speeds differ by as much" },
  loadAverageAtEnd: loadavg().map((x) => round(x, 2)),
  configuration: {
    clustersServiceProcesses: CLUSTERS_PROCS,
    provisionerProcesses: PROVISIONERS,
    provisionerCapacity: CAPACITY,
    tenantWorkers: WORKERS,
    createConcurrency: CREATE_CONCURRENCY,
    template: SHELL_SERVICES > 0 ? `${SHELL_SERVICES} services with a shell install each` : "no service actions (CREATE, CONFIRM, BOOTSTRAP per node)",
    sim: "zero delays",
    inThisProcess: "tenancy, gateway, the REST client and the status watch",
    targets: "at least 1,000 tasks/s on one server, with lazy fsync and with sync_interval: always",
  },
  targetsMet: Object.fromEntries(
    runs
      .filter((r) => r.natsServers === 1)
      .map((r) => [
        r.jetstream,
        { tasksPerSecond: r.tasksPerSecond, met: r.tasksPerSecond >= 1_000, of: runsOf.get(`1/${r.jetstream}`)?.map((x) => x.tasksPerSecond) },
      ]),
  ),
  runs,
  repeatedRuns,
  clustersProcessesComparison: compareRuns,
  clusterSizeRuns: fitRuns,
  costModel: costModel(),
};
mkdirSync(new URL("../results/", import.meta.url), { recursive: true });
writeFileSync(new URL("../results/clusters-throughput.json", import.meta.url), JSON.stringify(results, null, 2) + "\n");
console.log(JSON.stringify(results, null, 2));
process.exit(0);
