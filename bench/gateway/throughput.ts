/**
 * REST throughput and latency of the real pipeline (gateway -> NATS -> tenancy, as `npm start` runs them) beside
 * its floor measured in the same run: a bare uWebSockets.js server forwarding each request over NATS
 * request/reply (msgpack) to an echo responder that answers the real answer's bytes (floor/). Every server is a
 * process of its own on loopback, and so is the load generator (wrk). Floor and real runs alternate (A/B, B/A, ...)
 * so that the load others put on the machine falls on both; the load average is recorded with each run, and so is
 * the CPU time each pipeline's processes (and nats-server) spent per request, which shared load does not change.
 * Cases: one provider (GET /v2/providers/bench) and a list of 20 (GET /v2/providers); plus /status and an
 * unknown tenant's 401 on the real pipeline alone. Writes bench/results/gateway-throughput.json.
 *
 * Run: node --import=tsx bench/gateway/throughput.ts
 * Env: BENCH_DURATION_S (5 per run), BENCH_ROUNDS (3 A/B pairs per case), BENCH_CONNECTIONS (64),
 *      BENCH_PROFILE_DIR (every Corral process writes a CPU profile there, cpu-profiler.mjs; see profile-summary.ts).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "@corral/deploy";
import { startServiceProcess, type ServiceProcess } from "../../test/helpers/processes.js";
import { createProviders, IDENTITY } from "./bench-providers.js";
import { launchCorral, type LaunchedCorral } from "./launched-corral.js";
import { cpuSeconds } from "./process-cpu.js";
import { ensureWrk, runWrk, type LoadOptions, type LoadResult } from "./wrk.js";
import { median } from "../stats.js";

const DURATION_S = Number(process.env["BENCH_DURATION_S"] ?? 5);
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 3);
const CONNECTIONS = Number(process.env["BENCH_CONNECTIONS"] ?? 64);
const PROFILE_DIR = process.env["BENCH_PROFILE_DIR"];
/** The targets: real throughput at least this share of the floor's, real p99 at most this multiple. */
const TARGET = { throughputRatio: 0.8, p99Ratio: 1.25 };

const CASES = { getProvider: "/v2/providers/bench", listProviders: "/v2/providers" } as const;

interface Run extends LoadResult {
  /** 1-minute load average when the run started. */
  loadAverage1m: number;
  /** CPU milliseconds per 1000 answers, by process, and their total (the pipeline's processes and nats-server). */
  cpuMsPerKRequests: Record<string, number>;
}

const load: LoadOptions = { connections: CONNECTIONS, durationSeconds: DURATION_S };
const round2 = (x: number) => Math.round(x * 100) / 100;

/** One wrk run, with the CPU time `pids` used meanwhile. */
async function measured(wrk: string, url: string, headers: Record<string, string>, pids: Record<string, number>): Promise<Run> {
  const loadAverage1m = round2(loadavg()[0] ?? 0);
  const before = cpuSeconds(pids);
  const result = await runWrk(wrk, url, headers, load);
  const after = cpuSeconds(pids);
  const perK = (seconds: number) => round2((seconds * 1e6) / Math.max(1, result.requests));
  const byProcess = Object.fromEntries(Object.keys(pids).map((name) => [name, perK((after[name] ?? 0) - (before[name] ?? 0))]));
  const total = perK(Object.keys(pids).reduce((sum, name) => sum + (after[name] ?? 0) - (before[name] ?? 0), 0));
  return { loadAverage1m, ...result, cpuMsPerKRequests: { ...byProcess, total } };
}

/** The real pipeline's answer per path: what the echo responder answers on the floor. */
async function realAnswers(corral: LaunchedCorral): Promise<Record<string, unknown>> {
  const origin = new URL(corral.baseUrl).origin;
  const out: Record<string, unknown> = {};
  for (const path of Object.values(CASES)) out[path] = await (await fetch(origin + path, { headers: IDENTITY })).json();
  return out;
}

interface Floor {
  origin: string;
  echo: ServiceProcess;
  http: ServiceProcess;
}

async function startFloor(natsUrl: string, repliesFile: string): Promise<Floor> {
  const env = { BENCH_NATS_URL: natsUrl };
  const echo = await startServiceProcess({
    name: "floor-echo",
    entry: "bench/gateway/floor/echo-responder.ts",
    env: { ...env, BENCH_FLOOR_REPLIES: repliesFile },
    readyMsg: "echo ready",
  });
  const port = await freePort();
  const http = await startServiceProcess({
    name: "floor-http",
    entry: "bench/gateway/floor/http-forwarder.ts",
    env: { ...env, BENCH_FLOOR_PORT: String(port) },
    readyMsg: "floor listening",
  }).catch(async (err: unknown) => {
    await echo.stop();
    throw err;
  });
  return { origin: `http://127.0.0.1:${port}`, echo, http };
}

const wrk = ensureWrk();
const scratch = mkdtempSync(join(tmpdir(), "corral-bench-gateway-"));
const profileDir = PROFILE_DIR ? resolve(PROFILE_DIR) : undefined;
if (profileDir) mkdirSync(profileDir, { recursive: true });
const profiler = new URL("./cpu-profiler.mjs", import.meta.url).pathname;
const corral = await launchCorral(profileDir ? { env: { NODE_OPTIONS: `--import=${profiler}`, BENCH_PROFILE_DIR: profileDir } } : {});
let floorProcesses: ServiceProcess[] = [];
try {
  await createProviders(corral);
  const repliesFile = join(scratch, "floor-replies.json");
  writeFileSync(repliesFile, JSON.stringify(await realAnswers(corral)));
  const floor = await startFloor(corral.natsUrl, repliesFile);
  floorProcesses = [floor.echo, floor.http];
  const realOrigin = new URL(corral.baseUrl).origin;
  const corralPids = corral.pids();
  const natsServer = { "nats-server": corralPids["nats-server"] ?? 0 };
  const floorPids = { "floor-http": floor.http.pid, "floor-echo": floor.echo.pid, ...natsServer };
  const realPids = { gateway: corralPids["gateway"] ?? 0, tenancy: corralPids["tenancy"] ?? 0, ...natsServer };

  const cases: Record<string, unknown> = {};
  for (const [name, path] of Object.entries(CASES)) {
    // Warm-up (JIT, caches, connections) of both, not recorded.
    await runWrk(wrk, floor.origin + path, IDENTITY, { ...load, durationSeconds: 2 });
    await runWrk(wrk, realOrigin + path, IDENTITY, { ...load, durationSeconds: 2 });
    const runs: Array<{ floor: Run; real: Run }> = [];
    for (let i = 0; i < ROUNDS; i++) {
      const runFloor = () => measured(wrk, floor.origin + path, IDENTITY, floorPids);
      const runReal = () => measured(wrk, realOrigin + path, IDENTITY, realPids);
      // A/B, then B/A: a load that rises or falls during a pair falls on both alike.
      let floorRun: Run;
      let realRun: Run;
      if (i % 2 === 0) {
        floorRun = await runFloor();
        realRun = await runReal();
      } else {
        realRun = await runReal();
        floorRun = await runFloor();
      }
      runs.push({ floor: floorRun, real: realRun });
      const line = (r: Run) => `${r.requestsPerSecond}/s p99 ${r.latencyP99Ms} ms cpu ${r.cpuMsPerKRequests["total"]} ms/1k`;
      console.log(`${name} round ${i + 1}: floor ${line(floorRun)}, real ${line(realRun)} (load ${realRun.loadAverage1m})`);
    }
    const summary = (pick: (r: { floor: Run; real: Run }) => Run) => ({
      requestsPerSecond: median(runs.map((r) => pick(r).requestsPerSecond)),
      latencyP50Ms: median(runs.map((r) => pick(r).latencyP50Ms)),
      latencyP99Ms: median(runs.map((r) => pick(r).latencyP99Ms)),
      cpuMsPerKRequests: median(runs.map((r) => pick(r).cpuMsPerKRequests["total"] ?? Number.NaN)),
    });
    const floorMedian = summary((r) => r.floor);
    const realMedian = summary((r) => r.real);
    // Ratios per A/B pair (same moment, same load), then their median.
    const throughputRatio = round2(median(runs.map((r) => r.real.requestsPerSecond / r.floor.requestsPerSecond)));
    const p99Ratio = round2(median(runs.map((r) => r.real.latencyP99Ms / r.floor.latencyP99Ms)));
    // What the throughput ratio would be on a machine the two pipelines had to themselves, CPU-bound.
    const cpuRatio = round2(floorMedian.cpuMsPerKRequests / realMedian.cpuMsPerKRequests);
    cases[name] = {
      path,
      floor: floorMedian,
      real: realMedian,
      throughputRatio,
      p99Ratio,
      floorCpuOverRealCpu: cpuRatio,
      meetsTarget: throughputRatio >= TARGET.throughputRatio && p99Ratio <= TARGET.p99Ratio,
      non2xx: runs.reduce((n, r) => n + r.floor.non2xx + r.real.non2xx, 0),
      runs,
    };
  }
  const results = {
    date: new Date().toISOString(),
    machine: "2 cores shared by wrk, nats-server, redis-server, every Corral service and the floor's two processes (and other work)",
    connections: CONNECTIONS,
    durationSeconds: DURATION_S,
    rounds: ROUNDS,
    target: TARGET,
    cases,
    realOnly: {
      status: await measured(wrk, `${realOrigin}/status`, {}, realPids),
      unknownTenant401: await measured(wrk, realOrigin + CASES.getProvider, { ...IDENTITY, "Service-TenantID": "nobody" }, realPids),
    },
    loadAverageAtEnd: loadavg().map(round2),
  };
  mkdirSync(new URL("../results/", import.meta.url), { recursive: true });
  writeFileSync(new URL("../results/gateway-throughput.json", import.meta.url), JSON.stringify(results, null, 2) + "\n");
  console.log(JSON.stringify({ ...results, cases: Object.fromEntries(Object.entries(cases).map(([k, v]) => [k, { ...(v as object), runs: undefined }])) }, null, 2));
} finally {
  await Promise.all(floorProcesses.map((p) => p.stop()));
  await corral.stop();
  rmSync(scratch, { recursive: true, force: true });
}
