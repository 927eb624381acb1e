/**
 * REST throughput with Prometheus metrics on against the same with them off (issue 12; target: under 5% apart).
 * Two Corrals as `npm start` runs them (launched-corral.ts), one with `metrics.enabled=false`, the other with
 * every process on its metrics port and every port scraped once a second while it is measured (Prometheus
 * scrapes every 15 s by default: this is harsher). Both log each request at info (the request log is not part of
 * the switch). Runs alternate, off/on then on/off, so load others put on the machine falls on both; the CPU time
 * the gateway, tenancy and nats-server spent per request is recorded with each run, which shared load does not
 * change. Case: one provider (GET /v2/providers/bench). On a machine others load heavily the two arms' throughput
 * drifts apart by far more than the metrics cost, so the run also times, in this process, what metrics add to one
 * request (the gateway's request telemetry and a service's served-request histogram, on and off; a scrape of the
 * gateway's registry), which load barely changes. Writes bench/results/gateway-metrics-overhead.json.
 *
 * Run: node --import=tsx bench/gateway/metrics-overhead.ts
 * Env: BENCH_DURATION_S (5 per run), BENCH_ROUNDS (4 pairs), BENCH_CONNECTIONS (64).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { freePort } from "@corral/deploy";
import {
  createLogger,
  createMetricsRegistry,
  envNameOf,
  LabeledHistogram,
  METRICS_PROCESSES,
  metricsPortKey,
  seriesByStatus,
  type MetricsRegistry,
} from "@corral/shared";
import { apiRoutes, createRequestTelemetry } from "@corral/gateway/testing";
import { createProviders, IDENTITY } from "./bench-providers.js";
import { launchCorral, type LaunchedCorral } from "./launched-corral.js";
import { cpuSeconds } from "./process-cpu.js";
import { ensureWrk, runWrk, type LoadOptions, type LoadResult } from "./wrk.js";
import { median } from "../stats.js";

const DURATION_S = Number(process.env["BENCH_DURATION_S"] ?? 5);
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 4);
const CONNECTIONS = Number(process.env["BENCH_CONNECTIONS"] ?? 64);
const PATH = "/v2/providers/bench";
/** The target: throughput with metrics on within this share of the same with them off. */
const TARGET = { maxThroughputDifference: 0.05 };
const SCRAPE_EVERY_MS = 1000;

interface Run extends LoadResult {
  loadAverage1m: number;
  /** CPU milliseconds per 1000 answers of gateway, tenancy and nats-server, and their total. */
  cpuMsPerKRequests: Record<string, number>;
  /** Scrapes of every metrics port during the run (metrics on only). */
  scrapes: number;
}

const load: LoadOptions = { connections: CONNECTIONS, durationSeconds: DURATION_S };
const round2 = (x: number) => Math.round(x * 100) / 100;
const round4 = (x: number) => Math.round(x * 10000) / 10000;

/** Scrapes every URL once a second until stopped; answers how many full rounds it made. */
function scrapeEverySecond(urls: readonly string[]): { stop(): Promise<number> } {
  let running = true;
  let rounds = 0;
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      await Promise.all(urls.map(async (url) => (await fetch(url)).text()));
      rounds++;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, SCRAPE_EVERY_MS - (Date.now() - started))));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return rounds;
    },
  };
}

interface Arm {
  corral: LaunchedCorral;
  pids: Record<string, number>;
  metricsUrls: string[];
}

async function measured(wrk: string, arm: Arm): Promise<Run> {
  const loadAverage1m = round2(loadavg()[0] ?? 0);
  const scraper = arm.metricsUrls.length > 0 ? scrapeEverySecond(arm.metricsUrls) : undefined;
  const before = cpuSeconds(arm.pids);
  const result = await runWrk(wrk, new URL(arm.corral.baseUrl).origin + PATH, IDENTITY, load);
  const after = cpuSeconds(arm.pids);
  const scrapes = (await scraper?.stop()) ?? 0;
  const perK = (seconds: number) => round2((seconds * 1e6) / Math.max(1, result.requests));
  const used = (name: string) => (after[name] ?? 0) - (before[name] ?? 0);
  const byProcess = Object.fromEntries(Object.keys(arm.pids).map((name) => [name, perK(used(name))]));
  const total = perK(Object.keys(arm.pids).reduce((sum, name) => sum + used(name), 0));
  return { loadAverage1m, ...result, cpuMsPerKRequests: { ...byProcess, total }, scrapes };
}

async function armOf(corral: LaunchedCorral, metricsPorts: Record<string, number>): Promise<Arm> {
  await createProviders(corral);
  const all = corral.pids();
  const pids = { gateway: all["gateway"] ?? 0, tenancy: all["tenancy"] ?? 0, "nats-server": all["nats-server"] ?? 0 };
  return { corral, pids, metricsUrls: Object.values(metricsPorts).map((port) => `http://127.0.0.1:${port}/metrics`) };
}

/**
 * Nanoseconds per call of each function: runs of `n` calls, the functions in turn (so load that comes and goes
 * falls on each), the best of 7 rounds after a warm-up round.
 */
function nsPerCall(n: number, fns: ReadonlyArray<(i: number) => void>): number[] {
  const best = fns.map(() => Infinity);
  for (let round = 0; round < 8; round++) {
    fns.forEach((fn, k) => {
      const started = process.hrtime.bigint();
      for (let i = 0; i < n; i++) fn(i);
      if (round > 0) best[k] = Math.min(best[k]!, Number(process.hrtime.bigint() - started) / n);
    });
  }
  return best.map((ns) => Math.round(ns * 10) / 10);
}

/** What metrics add to one request, timed in this process: on against off, the request log apart. */
async function perRequestCost() {
  const routes = apiRoutes();
  const read = routes.find((r) => r.method === "GET" && r.pattern === "/providers/:name") ?? routes[0]!;
  const silent = createLogger({}, { level: "warn" });
  const discarding = createLogger({}, { write: () => {} });
  const telemetryRequest = (metrics: MetricsRegistry | undefined, log = silent) => {
    const telemetry = createRequestTelemetry({ log, metrics, routes, versionPrefix: "/v2" });
    return () => {
      const trace = telemetry.begin("GET", "/v2/providers/bench", "");
      trace.routed(read);
      trace.finished(200);
    };
  };
  const served = (metrics: MetricsRegistry | undefined) => {
    const histogram = new LabeledHistogram(metrics, { name: "bench_rpc_seconds", help: "bench", labelNames: ["endpoint", "status"], buckets: [0.001, 0.01, 0.1, 1] });
    const byStatus = seriesByStatus(histogram, { endpoint: "tenancy.catalog.providers.get" });
    return (i: number) => byStatus(200).observe((i % 100) / 10_000);
  };
  const registry = createMetricsRegistry();
  const N = 200_000;
  const [gatewayOffNs = NaN, gatewayOnNs = NaN, gatewayOnWithLogLineNs = NaN] = nsPerCall(N, [
    telemetryRequest(undefined),
    telemetryRequest(registry),
    telemetryRequest(createMetricsRegistry(), discarding),
  ]);
  const [serveOffNs = NaN, serveOnNs = NaN] = nsPerCall(N, [served(undefined), served(registry)]);
  const scrapes = 50;
  const started = process.hrtime.bigint();
  for (let i = 0; i < scrapes; i++) await registry.metrics();
  return {
    requestsTimed: N,
    /** Request id, timing, route lookup; metrics off; the log line below the level (not written). */
    gatewayTelemetryMetricsOffNs: gatewayOffNs,
    gatewayTelemetryMetricsOnNs: gatewayOnNs,
    /** The same with metrics on and the info line built and written (to a writer that drops it). */
    gatewayTelemetryWithRequestLogNs: gatewayOnWithLogLineNs,
    servedRequestHistogramOffNs: serveOffNs,
    servedRequestHistogramOnNs: serveOnNs,
    /** Metrics on minus off, gateway and serving service together, per request. */
    metricsNsPerRequest: round2(gatewayOnNs - gatewayOffNs + serveOnNs - serveOffNs),
    /** One scrape of a registry holding this gateway's series and the process metrics. */
    scrapeMs: round2(Number(process.hrtime.bigint() - started) / 1e6 / scrapes),
  };
}

const cost = await perRequestCost();
console.log(`per request: ${JSON.stringify(cost)}`);
const wrk = ensureWrk();
const metricsPorts: Record<string, number> = {};
const portEnv: Record<string, string> = {};
for (const name of METRICS_PROCESSES) {
  metricsPorts[name] = await freePort();
  portEnv[envNameOf(metricsPortKey(name))] = String(metricsPorts[name]);
}
const launched: LaunchedCorral[] = [];
try {
  const offCorral = await launchCorral({ env: { CORRAL_METRICS_ENABLED: "false" } });
  launched.push(offCorral);
  const onCorral = await launchCorral({ env: { CORRAL_METRICS_ENABLED: "true", ...portEnv } });
  launched.push(onCorral);
  const off = await armOf(offCorral, {});
  const on = await armOf(onCorral, metricsPorts);
  for (const url of on.metricsUrls) {
    const res = await fetch(url);
    if (res.status !== 200) throw new Error(`metrics at ${url}: HTTP ${res.status}`);
  }
  // Warm-up (JIT, caches, connections) of both, not recorded.
  for (const arm of [off, on]) await runWrk(wrk, new URL(arm.corral.baseUrl).origin + PATH, IDENTITY, { ...load, durationSeconds: 2 });

  const runs: Array<{ off: Run; on: Run }> = [];
  for (let i = 0; i < ROUNDS; i++) {
    let offRun: Run;
    let onRun: Run;
    if (i % 2 === 0) {
      offRun = await measured(wrk, off);
      onRun = await measured(wrk, on);
    } else {
      onRun = await measured(wrk, on);
      offRun = await measured(wrk, off);
    }
    runs.push({ off: offRun, on: onRun });
    const line = (r: Run) => `${r.requestsPerSecond}/s p99 ${r.latencyP99Ms} ms cpu ${r.cpuMsPerKRequests["total"]} ms/1k`;
    console.log(`round ${i + 1}: off ${line(offRun)}, on ${line(onRun)} (${onRun.scrapes} scrapes; load ${onRun.loadAverage1m})`);
  }
  const summary = (pick: (r: { off: Run; on: Run }) => Run) => ({
    requestsPerSecond: median(runs.map((r) => pick(r).requestsPerSecond)),
    latencyP50Ms: median(runs.map((r) => pick(r).latencyP50Ms)),
    latencyP99Ms: median(runs.map((r) => pick(r).latencyP99Ms)),
    gatewayCpuMsPerKRequests: median(runs.map((r) => pick(r).cpuMsPerKRequests["gateway"] ?? Number.NaN)),
    cpuMsPerKRequests: median(runs.map((r) => pick(r).cpuMsPerKRequests["total"] ?? Number.NaN)),
  });
  const offMedian = summary((r) => r.off);
  const onMedian = summary((r) => r.on);
  // Per pair (same moment, same load), then the median.
  const throughputRatio = round4(median(runs.map((r) => r.on.requestsPerSecond / r.off.requestsPerSecond)));
  const cpuRatio = round4(onMedian.cpuMsPerKRequests / offMedian.cpuMsPerKRequests);
  const gatewayCpuRatio = round4(onMedian.gatewayCpuMsPerKRequests / offMedian.gatewayCpuMsPerKRequests);
  const results = {
    date: new Date().toISOString(),
    machine: "2 cores shared by wrk, both Corrals (each: nats-server, redis-server, every service, a provisioner) and other work",
    path: PATH,
    connections: CONNECTIONS,
    durationSeconds: DURATION_S,
    rounds: ROUNDS,
    scrapeEveryMs: SCRAPE_EVERY_MS,
    target: TARGET,
    off: offMedian,
    on: onMedian,
    /** Median over pairs of on/off requests per second. */
    throughputRatio,
    /** On/off CPU per request of gateway + tenancy + nats-server, and of the gateway alone (medians). */
    cpuPerRequestRatio: cpuRatio,
    gatewayCpuPerRequestRatio: gatewayCpuRatio,
    perRequestCost: cost,
    /**
     * What the metrics' nanoseconds per request are of the CPU one request costs the gateway, tenancy and
     * nats-server (median of the off runs): the throughput difference a CPU-bound machine would show.
     */
    metricsShareOfRequestCpu: round4(cost.metricsNsPerRequest / (offMedian.cpuMsPerKRequests * 1000)),
    /** The measured throughput, on a machine this loaded, mostly says how the load moved between runs. */
    meetsTarget: Math.abs(1 - throughputRatio) < TARGET.maxThroughputDifference,
    meetsTargetByCpu: cost.metricsNsPerRequest / (offMedian.cpuMsPerKRequests * 1000) < TARGET.maxThroughputDifference,
    non2xx: runs.reduce((n, r) => n + r.off.non2xx + r.on.non2xx, 0),
    runs,
    loadAverageAtEnd: loadavg().map(round2),
  };
  mkdirSync(new URL("../results/", import.meta.url), { recursive: true });
  writeFileSync(new URL("../results/gateway-metrics-overhead.json", import.meta.url), JSON.stringify(results, null, 2) + "\n");
  console.log(JSON.stringify({ ...results, runs: undefined }, null, 2));
} finally {
  await Promise.all(launched.map((c) => c.stop()));
}
