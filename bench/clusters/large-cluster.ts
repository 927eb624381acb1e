/**
 * One 10,000-node cluster created and deleted end to end (sim provider, zero delays): the time of each phase
 * (request -> answer, -> active, each plan stage; delete request -> answer, -> terminated) and of reading the
 * cluster back. Targets: create and delete each under 2 minutes. Writes bench/results/clusters-large-cluster.json.
 *
 * Run: node --import=tsx bench/clusters/large-cluster.ts
 * Env: BENCH_NODES (10000), BENCH_SYNC ("lazy,always": the JetStream fsync modes to run), BENCH_CLUSTERS_PROCS (1),
 *      BENCH_PROVISIONERS (2), BENCH_CAPACITY (32), BENCH_WORKERS (64), BENCH_PHASE_TIMEOUT_MS (300000)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { KvWatchInclude } from "@nats-io/kv";
import { openStoredClusterState, type PlanRecord } from "@corral/clusters/testing";
import { decode, kvKey, streams, streamSubjects } from "@corral/contracts";
import { api } from "../../test/helpers/api.js";
import { createClusterCatalog } from "../../test/helpers/cluster-fixture.js";
import { cpuMeter, machine, round, startBenchSystem, trackClusters, type BenchSystem, type SyncMode } from "./lib.js";
import { envNumber as env } from "../env.js";

const NODES = env("BENCH_NODES", 10_000);
const MODES = (process.env["BENCH_SYNC"] ?? "lazy,always").split(",").map((x) => x.trim()) as SyncMode[];
const CLUSTERS_PROCS = env("BENCH_CLUSTERS_PROCS", 1);
const PROVISIONERS = env("BENCH_PROVISIONERS", 2);
const CAPACITY = env("BENCH_CAPACITY", 32);
const WORKERS = env("BENCH_WORKERS", 64);
const PHASE_TIMEOUT_MS = env("BENCH_PHASE_TIMEOUT_MS", 300_000);

/** When each stage of a plan ended, by watching the plan record (ms since `since`). */
async function watchStages(sys: BenchSystem, clusterId: string, planId: string, since: () => number) {
  const kv = (await openStoredClusterState(sys.nc)).kv.plans;
  const ended: Array<{ stage: number; tasks: number; endedAtS: number }> = [];
  let writes = 0;
  const watch = await kv.watch({ key: kvKey(clusterId, planId), include: KvWatchInclude.AllHistory });
  void (async () => {
    let stage = 0;
    for await (const e of watch) {
      if (e.operation !== "PUT") continue;
      writes++;
      const plan = decode<PlanRecord>(e.value);
      while (stage < plan.actor.context.stage) {
        ended.push({ stage, tasks: plan.stageSizes[stage] ?? 0, endedAtS: round((Date.now() - since()) / 1000, 2) });
        stage++;
      }
    }
  })();
  return {
    result: () => ({ stages: ended, planWrites: writes }),
    stop: () => watch.stop(),
  };
}

async function runMode(sync: SyncMode) {
  const sys = await startBenchSystem({
    sync,
    clustersProcesses: CLUSTERS_PROCS,
    provisioners: PROVISIONERS,
    provisionerCapacity: CAPACITY,
    requestTimeoutMs: PHASE_TIMEOUT_MS,
  });
  try {
    const catalog = await createClusterCatalog(sys.baseUrl, {
      tenant: "large",
      workers: WORKERS,
      services: [{ name: "base", actions: {} }],
    });
    await sys.waitForWorkers(catalog.tenant, Math.min(WORKERS, PROVISIONERS * CAPACITY));
    const tracker = await trackClusters(sys.nc);
    const loadBefore = loadavg();
    // Sizes of the first task messages (a sample: the server copies each to this connection too).
    const taskBytes: number[] = [];
    sys.nc.subscribe(streamSubjects[streams.tasks], { max: 50, callback: (_err, m) => void taskBytes.push(m.data.length) });

    // Create.
    let cpu = cpuMeter(sys);
    let t0 = Date.now();
    const created = await api(sys.baseUrl, "POST", "/clusters", {
      ...catalog.admin,
      body: { name: "large", clusterTemplate: catalog.template, numMachines: NODES },
    });
    if (created.status !== 200) throw new Error(`create: HTTP ${created.status} ${created.text}`);
    const createAnsweredS = (Date.now() - t0) / 1000;
    const id = (created.body as { id: string }).id;
    const startedAt = t0;
    const createStages = await watchStages(sys, id, `${id}-001`, () => startedAt);
    const activeAt = await tracker.waitAll([id], "active", PHASE_TIMEOUT_MS);
    const createCpu = cpu();
    createStages.stop();
    const createS = (activeAt - t0) / 1000;
    console.error(`[${sync}] create: answered ${createAnsweredS} s, active ${createS} s`);

    // Read it back.
    t0 = Date.now();
    const details = await api(sys.baseUrl, "GET", `/clusters/${id}`, catalog.admin);
    const getMs = Date.now() - t0;
    t0 = Date.now();
    const status = await api(sys.baseUrl, "GET", `/clusters/${id}/status`, catalog.admin);
    const statusMs = Date.now() - t0;
    const createTasks = (status.body as { stepstotal: number }).stepstotal;

    // Delete.
    cpu = cpuMeter(sys);
    t0 = Date.now();
    const deleted = await api(sys.baseUrl, "DELETE", `/clusters/${id}`, catalog.admin);
    if (deleted.status !== 200) throw new Error(`delete: HTTP ${deleted.status} ${deleted.text}`);
    const deleteAnsweredS = (Date.now() - t0) / 1000;
    const deleteStart = t0;
    const deleteStages = await watchStages(sys, id, `${id}-002`, () => deleteStart);
    const terminatedAt = await tracker.waitAll([id], "terminated", PHASE_TIMEOUT_MS);
    const deleteCpu = cpu();
    deleteStages.stop();
    tracker.stop();
    const deleteS = (terminatedAt - t0) / 1000;
    const deleteStatus = await api(sys.baseUrl, "GET", `/clusters/${id}/status`, catalog.admin);
    const deleteTasks = (deleteStatus.body as { stepstotal: number }).stepstotal;
    console.error(`[${sync}] delete: answered ${deleteAnsweredS} s, terminated ${deleteS} s`);

    return {
      jetstream: sync === "always" ? "sync_interval: always" : "default (lazy fsync)",
      loadAverageBefore: loadBefore.map((x) => round(x, 2)),
      create: {
        requestToAnswerSeconds: round(createAnsweredS, 2),
        requestToActiveSeconds: round(createS, 2),
        tasks: createTasks,
        tasksPerSecond: Math.round(createTasks / createS),
        taskMessageBytes: {
          sampled: taskBytes.length,
          mean: Math.round(taskBytes.reduce((a, b) => a + b, 0) / Math.max(1, taskBytes.length)),
          max: Math.max(0, ...taskBytes),
        },
        ...createStages.result(),
        cpuSecondsByProcess: createCpu,
        metTarget: createS < 120,
      },
      read: {
        getClusterMs: getMs,
        getClusterBytes: details.text.length,
        getClusterStatus: details.status,
        getStatusMs: statusMs,
      },
      delete: {
        requestToAnswerSeconds: round(deleteAnsweredS, 2),
        requestToTerminatedSeconds: round(deleteS, 2),
        tasks: deleteTasks,
        tasksPerSecond: Math.round(deleteTasks / deleteS),
        ...deleteStages.result(),
        cpuSecondsByProcess: deleteCpu,
        metTarget: deleteS < 120,
      },
    };
  } finally {
    await sys.stop();
  }
}

const runs = [];
for (const mode of MODES) runs.push(await runMode(mode));
const results = {
  date: new Date().toISOString(),
  machine: machine(),
  configuration: {
    nodes: NODES,
    clustersServiceProcesses: CLUSTERS_PROCS,
    provisionerProcesses: PROVISIONERS,
    provisionerCapacity: CAPACITY,
    tenantWorkers: WORKERS,
    template: "one service without actions: CREATE, CONFIRM, BOOTSTRAP per node; delete: DELETE per node",
    targets: "create under 120 s, delete under 120 s",
  },
  runs,
};
mkdirSync(new URL("../results/", import.meta.url), { recursive: true });
const file = NODES === 10_000 ? "clusters-large-cluster.json" : `clusters-large-cluster-${NODES}.json`;
writeFileSync(new URL(`../results/${file}`, import.meta.url), JSON.stringify(results, null, 2) + "\n");
console.log(JSON.stringify(results, null, 2));
process.exit(0);
