/**
 * What the single-machine default costs in memory, compiled JavaScript against the TypeScript sources through tsx
 * (issue 26, "What a process costs"; target: idle under 600 MB with the start time no worse). Each run is `npm
 * start` as a newcomer types it (embedded nats-server and redis-server, every service and a local provisioner) on a
 * fresh data dir: `npm start` runs the compiled JavaScript, `CORRAL_RUNTIME=tsx npm start` the sources. Per run:
 * - start time: from `npm start` to the launcher's `ready: the API is up`, and to the first answered catalog read;
 * - idle memory: after IDLE_SETTLE_S, the median of IDLE_SAMPLES samples a second apart of each process's RSS and
 *   PSS (bench/system/process-memory.ts), and their sums, with and without npm's own process (RSS counts the
 *   pages of the node binary each node process maps, about 43 MB, in every one of them; PSS shares them out);
 * - loaded memory: the peak while LOAD_CLUSTERS clusters of LOAD_MACHINES simulated machines are created, at most
 *   LOAD_CONCURRENCY at once, until each is active; then idle again, IDLE_SETTLE_S after the load (compiled
 *   processes collect garbage once idle: deploy/src/idle-gc.ts, checked every 10 s).
 * Runs alternate (compiled, tsx, tsx, compiled, ...) so that load others put on the machine falls on both. The
 * compiled build is made once beforehand (timed on its own: a first start adds it). Writes
 * bench/results/system-memory.json (with --smoke: tiny sizes, system-memory-smoke.json).
 *
 * Run alone on a quiet machine: node --import=tsx bench/system/memory.ts [--smoke]
 * Env: BENCH_ROUNDS (2 pairs), BENCH_IDLE_SETTLE_S (30), BENCH_IDLE_SAMPLES (10), BENCH_LOAD_CLUSTERS (30),
 *      BENCH_LOAD_MACHINES (3), BENCH_LOAD_CONCURRENCY (6).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { ensureNatsServer, freePort, repoRoot } from "@corral/deploy";
import { buildCompiled } from "../../deploy/src/build.js";
import { api, SUPERADMIN } from "../../test/helpers/api.js";
import { createCluster, createClusterCatalog, waitForStatus } from "../../test/helpers/cluster-fixture.js";
import { envNumber } from "../env.js";
import { sumOf, treeMemory, type ProcessMemory } from "./process-memory.js";

const SMOKE = process.argv.includes("--smoke");
const ROUNDS = envNumber("BENCH_ROUNDS", SMOKE ? 1 : 2);
const IDLE_SETTLE_S = envNumber("BENCH_IDLE_SETTLE_S", SMOKE ? 3 : 30);
const IDLE_SAMPLES = envNumber("BENCH_IDLE_SAMPLES", SMOKE ? 2 : 10);
const LOAD_CLUSTERS = envNumber("BENCH_LOAD_CLUSTERS", SMOKE ? 2 : 30);
const LOAD_MACHINES = envNumber("BENCH_LOAD_MACHINES", SMOKE ? 2 : 3);
const LOAD_CONCURRENCY = envNumber("BENCH_LOAD_CONCURRENCY", SMOKE ? 2 : 6);
const START_TIMEOUT_MS = 180_000;
const SAMPLE_EVERY_MS = 500;
const TARGET = { idleRssMb: 600 };
const RESULT = join(repoRoot, "bench", "results", SMOKE ? "system-memory-smoke.json" : "system-memory.json");

type Runtime = "compiled" | "tsx";

interface Snapshot {
  processes: ProcessMemory[];
  sum: { rssMb: number; pssMb: number };
  /** The same without npm's own process (and its shell), which only waits for `npm start`'s script. */
  sumWithoutNpm: { rssMb: number; pssMb: number };
}

interface Run {
  runtime: Runtime;
  round: number;
  startMs: { ready: number; serves: number };
  idle: Snapshot;
  loaded: Snapshot & { clusters: number; seconds: number };
  afterLoad: Snapshot;
  loadAverage1m: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const round1 = (x: number) => Math.round(x * 10) / 10;
const isNpm = (p: ProcessMemory) => p.name === "npm" || p.name === "sh";

function snapshot(processes: ProcessMemory[]): Snapshot {
  return { processes, sum: sumOf(processes), sumWithoutNpm: sumOf(processes.filter((p) => !isNpm(p))) };
}

/** Per process (by name, in order of the first sample), the median of each field over the samples. */
function medianSnapshot(samples: ProcessMemory[][]): Snapshot {
  const names = [...new Set(samples.flatMap((s) => s.map((p) => p.name)))];
  const processes = names.flatMap((name) => {
    const seen = samples.map((s) => s.filter((p) => p.name === name));
    const count = median(seen.map((s) => s.length));
    return Array.from({ length: count }, (_, i) => {
      const of = seen.map((s) => s[i]).filter((p): p is ProcessMemory => p !== undefined);
      return { pid: of[0]?.pid ?? 0, name, rssMb: round1(median(of.map((p) => p.rssMb))), pssMb: round1(median(of.map((p) => p.pssMb))) };
    });
  });
  return snapshot(processes);
}

interface Started {
  child: ChildProcess;
  baseUrl: string;
  dataDir: string;
  startMs: { ready: number; serves: number };
  stop(): Promise<void>;
}

/** `npm start` (or `CORRAL_RUNTIME=tsx npm start`) on a fresh data dir and free ports, until it serves. */
async function startCorral(runtime: Runtime): Promise<Started> {
  const dataDir = mkdtempSync(join(tmpdir(), "corral-bench-memory-"));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}/v2`;
  // The cached nats-server first on PATH, so a fresh data dir does not fetch one (as the launcher tests do).
  const natsDir = dirname(await ensureNatsServer());
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${natsDir}${delimiter}${process.env["PATH"] ?? ""}`,
    CORRAL_DATA_DIR: dataDir,
    CORRAL_SERVER_PORT: String(port),
    CORRAL_NATS_EMBEDDED_PORT: "0",
    CORRAL_REDIS_EMBEDDED_PORT: "0",
    CORRAL_SECURITY_AUTH_SERVER_BIND_PORT: String(await freePort()),
    CORRAL_RUNTIME: runtime,
    NO_UPDATE_NOTIFIER: "1",
    npm_config_update_notifier: "false",
  };
  for (const name of ["CORRAL_NATS_URL", "CORRAL_REDIS_URL", "CORRAL_CONFIG", "NODE_OPTIONS"]) delete env[name];
  const started = Date.now();
  const child = spawn("npm", ["start"], { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let readyAt: number | undefined;
  const launcherLines: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on("line", (line) => {
      if (!line.startsWith("[launcher]") && !line.startsWith("[start]") && !line.startsWith("[build]")) return;
      launcherLines.push(line);
      if (readyAt === undefined && line.includes("ready: the API is up")) readyAt = Date.now();
    });
  }
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await Promise.race([exited, sleep(60_000)]);
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    let servesAt: number | undefined;
    while (readyAt === undefined || servesAt === undefined) {
      if (Date.now() - started > START_TIMEOUT_MS) throw new Error(`not serving after ${START_TIMEOUT_MS} ms:\n${launcherLines.join("\n")}`);
      if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${launcherLines.join("\n")}`);
      if (servesAt === undefined && (await servesCatalogReads(baseUrl))) servesAt = Date.now();
      await sleep(25);
    }
    await waitForSim(baseUrl);
    return { child, baseUrl, dataDir, startMs: { ready: readyAt - started, serves: servesAt - started }, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function servesCatalogReads(baseUrl: string): Promise<boolean> {
  try {
    return (await api(baseUrl, "GET", "/providers", SUPERADMIN)).status === 200;
  } catch {
    return false;
  }
}

/** The local provisioner registers the `sim` provider type a moment after the API is up. */
async function waitForSim(baseUrl: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const types = await api(baseUrl, "GET", "/plugins/providertypes", SUPERADMIN);
    if (types.status === 200 && types.text.includes('"sim"')) return;
    await sleep(100);
  }
  throw new Error("the provider type sim was not registered within a minute");
}

async function idleSnapshot(root: number, settleS: number): Promise<Snapshot> {
  await sleep(settleS * 1000);
  const samples: ProcessMemory[][] = [];
  for (let i = 0; i < IDLE_SAMPLES; i++) {
    if (i > 0) await sleep(1000);
    samples.push(treeMemory(root));
  }
  return medianSnapshot(samples);
}

/** Creates the clusters while sampling the tree; answers the sample with the largest RSS sum. */
async function loadedSnapshot(root: number, baseUrl: string): Promise<Run["loaded"]> {
  const catalog = await createClusterCatalog(baseUrl, {
    workers: LOAD_CONCURRENCY,
    maxClusters: LOAD_CLUSTERS + 1,
    maxNodes: LOAD_CLUSTERS * LOAD_MACHINES + 1,
    services: [{ name: "base", actions: { install: "true", configure: "true", start: "true" } }],
  });
  let peak = snapshot(treeMemory(root));
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const now = snapshot(treeMemory(root));
      if (now.sum.rssMb > peak.sum.rssMb) peak = now;
      await sleep(SAMPLE_EVERY_MS);
    }
  })();
  const started = Date.now();
  let next = 0;
  const worker = async () => {
    while (next < LOAD_CLUSTERS) {
      next++;
      const id = await createCluster(baseUrl, catalog, LOAD_MACHINES);
      await waitForStatus(baseUrl, catalog, id, "active", 120_000);
    }
  };
  try {
    await Promise.all(Array.from({ length: LOAD_CONCURRENCY }, worker));
  } finally {
    sampling = false;
    await sampler;
  }
  return { ...peak, clusters: LOAD_CLUSTERS, seconds: round1((Date.now() - started) / 1000) };
}

async function measure(runtime: Runtime, round: number): Promise<Run> {
  console.log(`[memory] round ${round}: ${runtime}`);
  const corral = await startCorral(runtime);
  try {
    const root = corral.child.pid!;
    const idle = await idleSnapshot(root, IDLE_SETTLE_S);
    const loaded = await loadedSnapshot(root, corral.baseUrl);
    const afterLoad = await idleSnapshot(root, IDLE_SETTLE_S);
    const run: Run = { runtime, round, startMs: corral.startMs, idle, loaded, afterLoad, loadAverage1m: round1(loadavg()[0] ?? 0) };
    console.log(
      `[memory] ${runtime}: ready ${run.startMs.ready} ms, serves ${run.startMs.serves} ms; idle RSS ${idle.sumWithoutNpm.rssMb} MB ` +
        `(PSS ${idle.sumWithoutNpm.pssMb}), loaded peak RSS ${loaded.sumWithoutNpm.rssMb} MB, after load ${afterLoad.sumWithoutNpm.rssMb} MB`,
    );
    return run;
  } finally {
    await corral.stop();
  }
}

function summary(runs: Run[], runtime: Runtime) {
  const of = runs.filter((r) => r.runtime === runtime);
  const m = (f: (r: Run) => number) => round1(median(of.map(f)));
  return {
    runs: of.length,
    startMs: { ready: m((r) => r.startMs.ready), serves: m((r) => r.startMs.serves) },
    idleMb: { rss: m((r) => r.idle.sumWithoutNpm.rssMb), pss: m((r) => r.idle.sumWithoutNpm.pssMb), rssWithNpm: m((r) => r.idle.sum.rssMb) },
    loadedPeakMb: { rss: m((r) => r.loaded.sumWithoutNpm.rssMb), pss: m((r) => r.loaded.sumWithoutNpm.pssMb) },
    afterLoadMb: { rss: m((r) => r.afterLoad.sumWithoutNpm.rssMb), pss: m((r) => r.afterLoad.sumWithoutNpm.pssMb) },
    /** Median idle RSS per process name (the first of several instances). */
    idleRssMbByProcess: Object.fromEntries(
      [...new Set(of.flatMap((r) => r.idle.processes.map((p) => p.name)))].map((name) => [
        name,
        round1(median(of.map((r) => r.idle.processes.find((p) => p.name === name)?.rssMb ?? Number.NaN))),
      ]),
    ),
  };
}

const loadBefore = round1(loadavg()[0] ?? 0);
const forced = await buildCompiled({ force: true, log: (line) => console.log(`[build] ${line}`) });
const runs: Run[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  const order: Runtime[] = round % 2 === 1 ? ["compiled", "tsx"] : ["tsx", "compiled"];
  for (const runtime of order) runs.push(await measure(runtime, round));
}
const compiled = summary(runs, "compiled");
const tsx = summary(runs, "tsx");
const result = {
  benchmark: "system-memory",
  smoke: SMOKE,
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, memoryMb: Math.round(totalmem() / 2 ** 20), node: process.version, loadAverage1mBefore: loadBefore, loadAverage1mAfter: round1(loadavg()[0] ?? 0) },
  settings: { rounds: ROUNDS, idleSettleS: IDLE_SETTLE_S, idleSamples: IDLE_SAMPLES, loadClusters: LOAD_CLUSTERS, loadMachines: LOAD_MACHINES, loadConcurrency: LOAD_CONCURRENCY },
  buildMs: forced.ms,
  target: { idleMbBelow: TARGET.idleRssMb, startNoWorse: true },
  // RSS counts the node binary's pages (about 43 MB) once in every node process; PSS shares them out.
  met: { idleRss: compiled.idleMb.rss < TARGET.idleRssMb, idlePss: compiled.idleMb.pss < TARGET.idleRssMb, start: compiled.startMs.serves <= tsx.startMs.serves },
  summary: { compiled, tsx },
  runs,
};
mkdirSync(dirname(RESULT), { recursive: true });
writeFileSync(RESULT, `${JSON.stringify(result, null, 2)}\n`);
console.log(`[memory] compiled: idle ${compiled.idleMb.rss} MB RSS (${compiled.idleMb.pss} PSS), serves after ${compiled.startMs.serves} ms`);
console.log(`[memory] tsx:      idle ${tsx.idleMb.rss} MB RSS (${tsx.idleMb.pss} PSS), serves after ${tsx.startMs.serves} ms`);
console.log(`[memory] wrote ${RESULT}`);
