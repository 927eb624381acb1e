/**
 * Where creates solve: the clusters service asks the solver service for layouts and plans (this revision) or ran the
 * solver library in its own process (an earlier one). Alternated round by round on the shared machine, each round a
 * fresh system (sim provider, zero delays) in the revision's own tree:
 *
 * - small: BENCH_SMALL_CLUSTERS creates of BENCH_SMALL_NODES nodes, BENCH_CONCURRENCY at a time over REST: each
 *   create's time to its 200 answer and to `active`;
 * - large: BENCH_LARGE_CLUSTERS creates of BENCH_LARGE_NODES nodes one after another: the same two times;
 *
 * and, in each phase, the clusters service's event-loop delay (perf_hooks monitorEventLoopDelay, preloaded into it by
 * event-loop-probe.mjs) and the CPU seconds of the clusters and solver processes.
 *
 * The earlier revision is a tree of its own: the commit before "clusters: every solve through the solver service"
 * (3a738f9^, which already has this benchmark and a bench system with a solver process):
 *
 *   mkdir -p /tmp/before && git archive 3a738f9^ | tar -x -C /tmp/before
 *   mkdir /tmp/before/node_modules && for e in node_modules/* node_modules/.bin; do [ "$(basename $e)" = @corral ] ||
 *     ln -s "$PWD/$e" /tmp/before/node_modules/; done
 *   mkdir /tmp/before/node_modules/@corral && for e in node_modules/@corral/*; do ln -s "$(readlink $e)" /tmp/before/$e; done
 *   mkdir -p /tmp/before/.corral && ln -s "$PWD/.corral/bin" /tmp/before/.corral/bin
 *
 * Run: BENCH_BEFORE=/tmp/before BENCH_BEFORE_LABEL=3a738f9^ node --import=tsx bench/clusters/solve-path.ts
 *      -> bench/results/clusters-solve-path.json
 * Smoke: BENCH_SMOKE=1 node --import=tsx bench/clusters/solve-path.ts (tiny sizes, one round; without BENCH_BEFORE
 *      both arms run this tree) -> bench/results/clusters-solve-path-smoke.json
 * Env: BENCH_ROUNDS (3), BENCH_SMALL_CLUSTERS (60), BENCH_SMALL_NODES (5), BENCH_CONCURRENCY (8),
 *      BENCH_LARGE_CLUSTERS (3), BENCH_LARGE_NODES (2000), BENCH_PROVISIONERS (2), BENCH_CAPACITY (32)
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { createClusterCatalog, type ClusterCatalog } from "../../test/helpers/cluster-fixture.js";
import { createClusterClient } from "./create-client.js";
import { cpuMeter, machine, round, startBenchSystem, trackClusters, waitForQuietMachine, type BenchSystem } from "./lib.js";
import { envNumber as env } from "../env.js";
import { latencySummary } from "../stats.js";

const SMOKE = process.env["BENCH_SMOKE"] === "1";
const ROUNDS = env("BENCH_ROUNDS", SMOKE ? 1 : 3);
const SMALL_CLUSTERS = env("BENCH_SMALL_CLUSTERS", SMOKE ? 4 : 60);
const SMALL_NODES = env("BENCH_SMALL_NODES", SMOKE ? 2 : 5);
const CONCURRENCY = env("BENCH_CONCURRENCY", SMOKE ? 2 : 8);
const LARGE_CLUSTERS = env("BENCH_LARGE_CLUSTERS", SMOKE ? 1 : 3);
const LARGE_NODES = env("BENCH_LARGE_NODES", SMOKE ? 50 : 2000);
const PROVISIONERS = env("BENCH_PROVISIONERS", SMOKE ? 1 : 2);
const CAPACITY = env("BENCH_CAPACITY", SMOKE ? 8 : 32);
const TIMEOUT_MS = env("BENCH_TIMEOUT_MS", 10 * 60_000);
const HERE = new URL("../..", import.meta.url).pathname;
const PROBE = process.env["BENCH_LOOP_PROBE"] ?? new URL("./event-loop-probe.mjs", import.meta.url).pathname;
/** Set by the driver: this process runs one round in its own tree and writes the round's result here. */
const ROUND_OUT = process.env["BENCH_ROUND_OUT"];

interface LoopDelay {
  seconds: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
}

interface Phase {
  clusters: number;
  nodes: number;
  /** ms from each create's request to its 200 answer. */
  answerMs: Latencies;
  /** ms from each create's request to its cluster being active. */
  activeMs: Latencies;
  /** From the first request to the last cluster active. */
  seconds: number;
  clustersLoopDelay: LoopDelay;
  cpuSeconds: Record<string, number>;
}

type Latencies = ReturnType<typeof latencySummary>;

/** Asks the probe in the clusters process for what it measured since it was last asked (and starts it over). */
async function loopDelay(sys: BenchSystem, dir: string): Promise<LoopDelay> {
  const pid = sys.clusters[0]?.pid;
  if (pid === undefined) throw new Error("no clusters process");
  const file = join(dir, `${pid}.json`);
  const read = () => {
    try {
      return JSON.parse(readFileSync(file, "utf8")) as LoopDelay & { seq: number };
    } catch {
      return undefined;
    }
  };
  const before = read()?.seq ?? 0;
  process.kill(pid, "SIGUSR2");
  for (let i = 0; i < 200; i++) {
    const now = read();
    if (now && now.seq > before) {
      const { seq: _seq, ...stats } = now;
      return stats;
    }
    await sleep(25);
  }
  throw new Error("the event-loop probe did not answer (is it preloaded into the clusters process?)");
}

/** Creates `count` clusters of `nodes` nodes, `concurrency` at a time, and waits until all are active. */
async function phase(
  sys: BenchSystem,
  probeDir: string,
  catalog: ClusterCatalog,
  name: string,
  count: number,
  nodes: number,
  concurrency: number,
): Promise<Phase> {
  const tracker = await trackClusters(sys.nc);
  const client = createClusterClient(sys.baseUrl, concurrency);
  await loopDelay(sys, probeDir);
  const cpu = cpuMeter(sys);
  const started = Date.now();
  const answers: number[] = [];
  const requested = new Map<string, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        const at = performance.now();
        const atMs = Date.now();
        const id = await client.create(catalog, nodes, `${name}${i}`);
        answers.push(performance.now() - at);
        requested.set(id, atMs);
      }
    }),
  );
  client.close();
  const ids = [...requested.keys()];
  const activeAt = await tracker.waitAll(ids, "active", TIMEOUT_MS);
  const clustersLoopDelay = await loopDelay(sys, probeDir);
  const cpuSeconds = cpu();
  const actives = ids.map((id) => (tracker.reachedAt(id, "active") ?? activeAt) - (requested.get(id) ?? started));
  tracker.stop();
  return {
    clusters: count,
    nodes,
    answerMs: latencySummary(answers),
    activeMs: latencySummary(actives),
    seconds: round((activeAt - started) / 1000, 2),
    clustersLoopDelay,
    cpuSeconds,
  };
}

/** One round in this process's tree: a fresh system, a warm-up cluster, then the two phases. */
async function runRound(out: string): Promise<void> {
  const settledMs = await waitForQuietMachine();
  const probeDir = mkdtempSync(join(tmpdir(), "corral-loop-delay-"));
  process.env["BENCH_LOOP_DELAY_DIR"] = probeDir;
  const sys = await startBenchSystem({
    sync: "lazy",
    clustersProcesses: 1,
    provisioners: PROVISIONERS,
    provisionerCapacity: CAPACITY,
    requestTimeoutMs: 120_000,
    nodeArgs: { clusters: [`--import=${PROBE}`] },
  });
  try {
    const workers = PROVISIONERS * CAPACITY;
    // Services without actions: the layout and the plan have every node to place, the sim nodes little to run.
    const services = ["base", "data", "compute"].map((name) => ({ name, actions: {} }));
    const catalog = await createClusterCatalog(sys.baseUrl, { tenant: "bench", workers, services });
    await sys.waitForWorkers(catalog.tenant, workers);
    await phase(sys, probeDir, catalog, "warm", 2, SMALL_NODES, 2);
    const small = await phase(sys, probeDir, catalog, "s", SMALL_CLUSTERS, SMALL_NODES, CONCURRENCY);
    const large = await phase(sys, probeDir, catalog, "l", LARGE_CLUSTERS, LARGE_NODES, 1);
    writeFileSync(out, JSON.stringify({ settledMs, small, large }));
  } finally {
    await sys.stop();
    rmSync(probeDir, { recursive: true, force: true });
  }
}

type Round = { settledMs: number; small: Phase; large: Phase };

const run = promisify(execFile);

/** One round in the tree at `dir`, as a child process there (its own modules, its own clusters service). */
async function roundIn(dir: string): Promise<Round> {
  const out = join(tmpdir(), `corral-solve-path-${process.pid}-${Date.now()}.json`);
  const childEnv = { ...process.env, BENCH_ROUND_OUT: out, BENCH_LOOP_PROBE: PROBE };
  await run(process.execPath, ["--import=tsx", "bench/clusters/solve-path.ts"], { cwd: dir, env: childEnv, maxBuffer: 64 << 20, timeout: 2 * TIMEOUT_MS });
  try {
    return JSON.parse(readFileSync(out, "utf8")) as Round;
  } finally {
    rmSync(out, { force: true });
  }
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

function summary(rounds: readonly Round[]) {
  const of = (pick: (r: Round) => number) => round(median(rounds.map(pick)), 1);
  return {
    median: {
      smallAnswerP50Ms: of((r) => r.small.answerMs.p50),
      smallAnswerP90Ms: of((r) => r.small.answerMs.p90),
      smallActiveP50Ms: of((r) => r.small.activeMs.p50),
      smallSeconds: of((r) => r.small.seconds),
      smallClustersLoopDelayP99Ms: of((r) => r.small.clustersLoopDelay.p99Ms),
      smallClustersLoopDelayMaxMs: of((r) => r.small.clustersLoopDelay.maxMs),
      largeAnswerMeanMs: of((r) => r.large.answerMs.mean),
      largeActiveMeanMs: of((r) => r.large.activeMs.mean),
      largeClustersLoopDelayP99Ms: of((r) => r.large.clustersLoopDelay.p99Ms),
      largeClustersLoopDelayMaxMs: of((r) => r.large.clustersLoopDelay.maxMs),
    },
    rounds,
  };
}

async function drive(): Promise<void> {
  const before = process.env["BENCH_BEFORE"] ?? (SMOKE ? HERE : undefined);
  if (!before) throw new Error("BENCH_BEFORE: the directory of the earlier revision's tree (or BENCH_SMOKE=1)");
  const beforeLabel = process.env["BENCH_BEFORE_LABEL"] ?? before;
  const loadBefore = loadavg();
  const arms = { before: [] as Round[], after: [] as Round[] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const arm of r % 2 ? (["after", "before"] as const) : (["before", "after"] as const)) {
      const result = await roundIn(arm === "before" ? before : HERE);
      arms[arm].push(result);
      console.error(
        `${arm}: small answer p50 ${result.small.answerMs.p50} ms, active p50 ${result.small.activeMs.p50} ms, loop delay p99 ${result.small.clustersLoopDelay.p99Ms} ms; ` +
          `large answer ${result.large.answerMs.mean} ms, active ${result.large.activeMs.mean} ms, loop delay max ${result.large.clustersLoopDelay.maxMs} ms`,
      );
    }
  }
  const head = await run("git", ["rev-parse", "--short", "HEAD"], { cwd: HERE }).catch(() => ({ stdout: "" }));
  const result = {
    date: new Date().toISOString(),
    machine: machine(),
    loadBefore,
    loadAfter: loadavg(),
    configuration: {
      small: { clusters: SMALL_CLUSTERS, nodes: SMALL_NODES, concurrency: CONCURRENCY },
      large: { clusters: LARGE_CLUSTERS, nodes: LARGE_NODES, concurrency: 1 },
      provisioners: PROVISIONERS,
      provisionerCapacity: CAPACITY,
      template: "three services without actions: CREATE, CONFIRM, BOOTSTRAP per node",
    },
    before: { revision: beforeLabel, solves: "in the clusters service (library)", ...summary(arms.before) },
    after: { revision: head.stdout.trim(), solves: "in the solver service", ...summary(arms.after) },
  };
  const dir = join(HERE, "bench", "results");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, SMOKE ? "clusters-solve-path-smoke.json" : "clusters-solve-path.json"), JSON.stringify(result, null, 2) + "\n");
}

if (ROUND_OUT) await runRound(ROUND_OUT);
else await drive();
process.exit(0);
