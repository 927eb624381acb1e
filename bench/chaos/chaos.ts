/**
 * The chaos benchmark: 200 clusters of mixed templates (test catalog on `sim`, actions by the `recorder` test
 * automator) through create, configure, add services, stop, start and delete on a three-node NATS cluster with two
 * processes of every service and three provisioners; first without faults, then (new tenant, same system) while
 * the fault injector SIGKILLs each service instance, each provisioner, one NATS node at a time and Redis at random
 * moments and SIGSTOPs a process past its timeouts. Each run is bounded in time (no operation starts after
 * BENCH_MINUTES). The checker's verdict (targets: 0 duplicated side effects, 0 lost work), the faults by kind, REST
 * errors and the longest outage, and the throughput with faults against without are written to
 * bench/results/chaos.json.
 *
 * Run: node --import=tsx bench/chaos/chaos.ts
 * Env: BENCH_CLUSTERS (200), BENCH_MINUTES (8 per run), BENCH_CONCURRENCY (20), BENCH_CAPACITY (8: each run's tenant gets 3 x this many workers),
 *      BENCH_SIM_DELAY_MS (100: every sim task takes this long), BENCH_BASELINE (1; 0 skips the run without faults)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { runChaos, type ChaosRunOptions, type ChaosRunReport } from "../../test/helpers/chaos/chaos-run.js";
import { startChaosSystem } from "../../test/helpers/chaos/chaos-system.js";
import { verdictSummary } from "../../test/helpers/chaos/checker.js";
import { machine, round } from "../clusters/lib.js";
import { envNumber as env } from "../env.js";

const CLUSTERS = env("BENCH_CLUSTERS", 200);
const MINUTES = env("BENCH_MINUTES", 8);
const CONCURRENCY = env("BENCH_CONCURRENCY", 20);
const CAPACITY = env("BENCH_CAPACITY", 8);
const SIM_DELAY_MS = env("BENCH_SIM_DELAY_MS", 100);
const BASELINE = env("BENCH_BASELINE", 1) !== 0;

const load = () => loadavg().map((x) => round(x, 1));
const summary = (r: ChaosRunReport) => ({
  clustersStarted: r.workload.runs.length,
  clustersThroughAllOperations: r.workload.runs.filter((x) => x.operations.length === 6 && !x.failure).length,
  operationsCompleted: r.workload.operationsCompleted,
  operationsPerMinute: r.operationsPerMinute,
  elapsedSeconds: round(r.workload.elapsedMs / 1000, 1),
  failedSequences: r.workload.runs.filter((x) => x.failure).map((x) => `${x.spec.name} (${x.id ?? "-"}): ${x.failure}`),
  unansweredCalls: r.workload.unansweredCalls,
  rest: r.availability,
  verdict: verdictSummary(r.verdict),
  lostWork: r.verdict.lostTasks.length + r.verdict.lostResults.length,
  duplicatedSideEffects: r.verdict.duplicatedSideEffects.length,
});

// Room for both runs' tenants: the workers of the run without faults stay placed (idle) during the other.
const sys = await startChaosSystem({ provisionerCapacity: 2 * CAPACITY });
const loadBefore = load();
let baseline: ChaosRunReport | undefined;
let chaos: ChaosRunReport;
try {
  const common: Omit<ChaosRunOptions, "tenant" | "faults"> = {
    clusters: CLUSTERS,
    concurrency: CONCURRENCY,
    durationMs: MINUTES * 60_000,
    workers: 3 * CAPACITY,
    sim: { delay_ms: String(SIM_DELAY_MS) },
    settleTimeoutMs: 180_000,
  };
  if (BASELINE) {
    baseline = await runChaos(sys, { ...common, tenant: "baseline", faults: false });
    console.log("without faults:", JSON.stringify(summary(baseline)));
  }
  chaos = await runChaos(sys, { ...common, tenant: "chaos", faults: {} });
  console.log("with faults:", JSON.stringify(summary(chaos)));
} finally {
  await sys.stop();
}

const withFaults = summary(chaos);
const result = {
  date: new Date().toISOString(),
  machine: machine(),
  loadAverage: { before: loadBefore, after: load() },
  system: "three-node NATS JetStream cluster (R3, lazy fsync), 2 processes each of gateway, tenancy, clusters, solver, plugins, metrics; 3 provisioners; redis",
  configuration: { clusters: CLUSTERS, minutesPerRun: MINUTES, concurrency: CONCURRENCY, workersPerRun: 3 * CAPACITY, provisionerCapacity: 2 * CAPACITY, simDelayMs: SIM_DELAY_MS, templates: ["webapp x2", "k8s-single x1", "k8s-distributed x3"] },
  withoutFaults: baseline ? summary(baseline) : null,
  withFaults: {
    ...withFaults,
    faultsByKind: chaos.faultsByKind,
    faults: chaos.faults.map((f) => ({ ...f, downMs: f.recoveredAt !== undefined ? f.recoveredAt - f.at : null })),
  },
  throughputWithFaultsVsWithout: baseline ? round(chaos.operationsPerMinute / Math.max(1, baseline.operationsPerMinute), 2) : null,
  targets: { duplicatedSideEffects: 0, lostWork: 0 },
  metTargets: withFaults.duplicatedSideEffects === 0 && withFaults.lostWork === 0,
  examples: {
    duplicated: chaos.verdict.duplicatedSideEffects.slice(0, 10),
    lostTasks: chaos.verdict.lostTasks.slice(0, 10),
    lostResults: chaos.verdict.lostResults.slice(0, 10),
    wrongState: chaos.verdict.wrongState.slice(0, 10),
  },
};
mkdirSync("bench/results", { recursive: true });
writeFileSync("bench/results/chaos.json", JSON.stringify(result, null, 2) + "\n");
console.log(JSON.stringify({ withoutFaults: result.withoutFaults, withFaults: withFaults, throughput: result.throughputWithFaultsVsWithout }, null, 2));
