/**
 * Where the time of the throughput scenario goes. Assembles one clusters service in this process the way
 * services/clusters/src/service.ts does, but with every dependency (each store, the usage store, the tenancy
 * client, the publisher, the actors' effects and dispatcher) wrapped in a timer (not the KV buckets: the stores
 * reach their streams through shared/src/kv.ts, which needs the buckets as openBucket made them); provisioners run as child processes. Creates clusters
 * straight through `createCluster` (no gateway) and reports, per create, how long each awaited step took (through
 * AsyncLocalStorage), and for the rest (results, dispatch) the total time in each call, its count and its failures
 * (compare-and-set conflicts). Diagnostic only: writes bench/results/clusters-profile.json.
 *
 * Run: node --import=tsx bench/clusters/profile.ts
 * Env: BENCH_CLUSTERS (200), BENCH_NODES (5), BENCH_SYNC (lazy), BENCH_CREATE_CONCURRENCY (16), BENCH_WORKERS (64)
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdirSync, writeFileSync } from "node:fs";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import type { Identity } from "@corral/contracts";
import { connectNats, mapLimit, silentLogger } from "@corral/shared";
import {
  createActors,
  createCluster,
  openEngineDeps,
  startResultsConsumer,
  type Actors,
  type EngineDeps,
  type Effects,
} from "@corral/clusters/testing";
import { createClusterCatalog } from "../../test/helpers/cluster-fixture.js";
import { cpuMeter, round, startBenchSystem, trackClusters, type SyncMode } from "./lib.js";
import { envNumber as env } from "../env.js";

const CLUSTERS = env("BENCH_CLUSTERS", 200);
const NODES = env("BENCH_NODES", 5);
const SYNC = (process.env["BENCH_SYNC"] ?? "lazy") as SyncMode;
const CREATE_CONCURRENCY = env("BENCH_CREATE_CONCURRENCY", 16);
const WORKERS = env("BENCH_WORKERS", 64);

interface Stat {
  calls: number;
  failures: number;
  totalMs: number;
  maxMs: number;
}
const global = new Map<string, Stat>();
const perCreate = new AsyncLocalStorage<Map<string, Stat>>();
const createBreakdowns: Array<Map<string, Stat>> = [];
const planEventCounts: number[] = [];

function add(map: Map<string, Stat>, name: string, ms: number, failed: boolean) {
  const s = map.get(name) ?? { calls: 0, failures: 0, totalMs: 0, maxMs: 0 };
  s.calls++;
  if (failed) s.failures++;
  s.totalMs += ms;
  s.maxMs = Math.max(s.maxMs, ms);
  map.set(name, s);
}

function record(name: string, ms: number, failed: boolean) {
  const local = perCreate.getStore();
  add(local ?? global, name, ms, failed);
}

/** Times every method call of `obj` (promises until they settle) under `name.method`. */
function timed<T extends object>(name: string, obj: T): T {
  return new Proxy(obj, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== "function" || prop === "constructor") return value;
      return (...args: unknown[]) => {
        const started = performance.now();
        const label = `${name}.${String(prop)}`;
        try {
          const out = (value as (...a: unknown[]) => unknown).apply(target, args);
          if (out instanceof Promise) {
            return out.then(
              (v) => (record(label, performance.now() - started, false), v),
              (err: unknown) => {
                record(label, performance.now() - started, true);
                throw err;
              },
            );
          }
          record(label, performance.now() - started, false);
          return out;
        } catch (err) {
          record(label, performance.now() - started, true);
          throw err;
        }
      };
    },
  });
}

const sys = await startBenchSystem({ sync: SYNC, clustersProcesses: 0, provisioners: 2, provisionerCapacity: 32 });
try {
  const catalog = await createClusterCatalog(sys.baseUrl, { tenant: "bench", workers: WORKERS, services: [{ name: "base", actions: {} }] });
  await sys.waitForWorkers(catalog.tenant, WORKERS);

  const nc = await connectNats({ url: sys.nats.url, name: "profiled-clusters" });
  const opened = await openEngineDeps(nc, { log: silentLogger });
  const deps: EngineDeps = {
    ...opened,
    clusters: timed("clusters", opened.clusters),
    nodes: timed("nodes", opened.nodes),
    plans: timed("plans", opened.plans),
    counters: timed("counters", opened.counters),
    credentials: timed("credentials", opened.credentials),
    usage: timed("usage", opened.usage),
    tenancy: timed("tenancy", opened.tenancy),
    publisher: timed("publisher", opened.publisher),
  };
  const inner = createActors(deps);
  const effects: Effects = {
    ...timed("effects", inner.effects),
    deliverToPlan: (ref, events) => {
      planEventCounts.push(events.length);
      return timed("effects", inner.effects).deliverToPlan(ref, events);
    },
  };
  const actors: Actors = { ...inner, effects, dispatcher: timed("dispatcher", inner.dispatcher) };
  const results = await startResultsConsumer(deps, effects);
  const tracker = await trackClusters(sys.nc);
  const identity: Identity = { tenant: catalog.tenant, userId: "admin", role: "admin" };

  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  const cpu = cpuMeter(sys, "this process (clusters service, tenancy, gateway)");
  const started = Date.now();
  const createMs: number[] = [];
  const ids = await mapLimit(
    Array.from({ length: CLUSTERS }, (_, i) => i),
    CREATE_CONCURRENCY,
    async (i) => {
      const mine = new Map<string, Stat>();
      createBreakdowns.push(mine);
      const t0 = performance.now();
      const id = await perCreate.run(mine, () =>
        createCluster({ deps, actors }, identity, { name: `p${i}`, clusterTemplate: catalog.template, numMachines: NODES }),
      );
      createMs.push(performance.now() - t0);
      return id;
    },
  );
  const answered = Date.now();
  const activeAt = await tracker.waitAll(ids, "active", 10 * 60_000);
  const cpuUsed = cpu();
  loopDelay.disable();
  tracker.stop();
  await results.stop();
  opened.clusters.stop();

  // Per create: mean time in each step (calls made inside createCluster, dispatch of stage 0 included).
  const merged = new Map<string, Stat>();
  for (const m of createBreakdowns) for (const [k, s] of m) for (let i = 0; i < s.calls; i++) add(merged, k, s.totalMs / s.calls, i < s.failures);
  const table = (m: Map<string, Stat>, per: number) =>
    Object.fromEntries(
      [...m.entries()]
        .sort((x, y) => y[1].totalMs - x[1].totalMs)
        .map(([k, s]) => [k, { calls: round(s.calls / per, 2), failures: s.failures, msEach: round(s.totalMs / s.calls, 2), msTotalPer: round(s.totalMs / per, 2), maxMs: round(s.maxMs, 1) }]),
    );
  const sortedCreate = [...createMs].sort((a, b) => a - b);
  const tasks = CLUSTERS * NODES * 3;
  const out = {
    date: new Date().toISOString(),
    jetstream: SYNC,
    clusters: CLUSTERS,
    nodes: NODES,
    createConcurrency: CREATE_CONCURRENCY,
    note: "one clusters service in this process with timed dependencies (no gateway); 2 provisioner processes",
    secondsUntilAllCreatesAnswered: round((answered - started) / 1000, 2),
    secondsUntilAllActive: round((activeAt - started) / 1000, 2),
    tasksPerSecond: Math.round(tasks / ((activeAt - started) / 1000)),
    createMs: { p50: round(sortedCreate[Math.floor(sortedCreate.length / 2)] ?? 0, 1), max: round(sortedCreate.at(-1) ?? 0, 1) },
    cpuSeconds: cpuUsed,
    eventLoopDelayMs: {
      mean: round(loopDelay.mean / 1e6, 1),
      p50: round(loopDelay.percentile(50) / 1e6, 1),
      p99: round(loopDelay.percentile(99) / 1e6, 1),
      max: round(loopDelay.max / 1e6, 1),
    },
    perCreate: table(merged, CLUSTERS),
    outsideCreatesPerTask: table(global, tasks),
    eventsPerPlanWrite: {
      writes: planEventCounts.length,
      meanEvents: round(planEventCounts.reduce((a, b) => a + b, 0) / Math.max(1, planEventCounts.length), 2),
    },
  };
  mkdirSync(new URL("../results/", import.meta.url), { recursive: true });
  writeFileSync(new URL("../results/clusters-profile.json", import.meta.url), JSON.stringify(out, null, 2) + "\n");
  console.log(JSON.stringify(out, null, 2));
  await nc.drain().catch(() => {});
} finally {
  await sys.stop();
}
process.exit(0);
