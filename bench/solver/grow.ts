/**
 * Growing and shrinking benchmark. First the solver alone: a BENCH_NODES-node cluster of each case grows by
 * BENCH_GROW nodes and shrinks back, timed in the solver library:
 *
 * - grow: `growCluster` with the solver choosing the new nodes, and with the services named (workers);
 * - shrink back: `checkShrink` of the new nodes, and of one node of the grown cluster;
 * - for reference, the create of the grown size (`solveLayout`), which a grow does not need to run.
 *
 * Cases: k8s-distributed (the multi-tier template: control plane, workers with and without coredns) and webapp
 * (postgresql at its max on one node). Target: each grow and each check under 100 ms on 1,000 + 100 nodes.
 *
 * Then live (grow-live.ts): a `sim` cluster of BENCH_NODES nodes grown by BENCH_GROW through the API and shrunk
 * back, as child processes: the dry runs (solver and planner through the services), time to answer and to active.
 *
 * Run alone: node --import=tsx bench/solver/grow.ts -> bench/results/solver-grow.json
 * Smoke: BENCH_SMOKE=1 node --import=tsx bench/solver/grow.ts (50 nodes + 5, few runs)
 *      -> bench/results/solver-grow-smoke.json (not committed)
 * Env: BENCH_NODES (1000), BENCH_GROW (100), BENCH_RUNS (15), BENCH_LIVE (1; 0 skips the live part),
 *      BENCH_PROVISIONERS (2), BENCH_CAPACITY (32), BENCH_TIMEOUT_S (600 per operation)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ClusterTemplate, ExistingNode } from "@corral/contracts";
import { checkLayout, checkShrink, growCluster, solveLayout, type GrowRequest } from "@corral/solver";
import { fixtureSolverCatalog, fixtureTemplate } from "../../test/helpers/fixture-catalog.js";
import { envNumber } from "../env.js";
import { median } from "../stats.js";
import { growLive } from "./grow-live.js";

const SMOKE = process.env["BENCH_SMOKE"] === "1";
const NODES = envNumber("BENCH_NODES", SMOKE ? 50 : 1000);
const GROW = envNumber("BENCH_GROW", SMOKE ? 5 : 100);
const RUNS = envNumber("BENCH_RUNS", SMOKE ? 3 : 15);
const LIVE = envNumber("BENCH_LIVE", 1) === 1;
const TARGET_MS = 100;
const OUT = join(dirname(fileURLToPath(import.meta.url)), "../results", SMOKE ? "solver-grow-smoke.json" : "solver-grow.json");

const catalog = fixtureSolverCatalog();
const CLUSTER = { clusterId: "00000042", clusterName: "bench" };

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/** Median and max of `RUNS` timings after two untimed runs. */
function timed(fn: () => unknown): { medianMs: number; maxMs: number } {
  for (let i = 0; i < 2; i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    fn();
    samples.push(performance.now() - start);
  }
  return { medianMs: round(median(samples)), maxMs: round(Math.max(...samples)) };
}

function create(template: ClusterTemplate, numMachines: number) {
  return solveLayout({ template, provider: { name: template.defaults.provider }, catalog, numMachines, ...CLUSTER });
}

/** Nodes per node layout, for the result file. */
const layoutSummary = (nodes: readonly ExistingNode[]) => {
  const counts = new Map<string, number>();
  for (const n of nodes) {
    const key = `${n.hardwaretype}/${n.imagetype} ${[...n.services].sort().join("+")}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return Object.fromEntries(counts);
};

function benchTemplate(name: string, workerServices: string[]): Record<string, unknown> {
  const template = fixtureTemplate(name);
  const cluster = create(template, NODES);
  const request: GrowRequest = {
    template,
    provider: { name: template.defaults.provider },
    catalog,
    nodes: cluster.nodes,
    clusterServices: cluster.services,
    numMachines: GROW,
    ...CLUSTER,
  };
  const grown = growCluster(request);
  const all = [...cluster.nodes, ...grown.nodes];
  const violations = checkLayout(template, all);
  if (violations.length > 0) throw new Error(`${name}: the grown cluster breaks its template: ${JSON.stringify(violations)}`);
  const newIds = grown.nodes.map((n) => n.id);
  const back = checkShrink({ template, catalog, nodes: all, remove: newIds });
  if (!back.ok) throw new Error(`${name}: shrinking back refused: ${JSON.stringify(back.violations)}`);
  const lastWorker = grown.nodes[grown.nodes.length - 1]!.id;
  const shrinkOne = checkShrink({ template, catalog, nodes: all, remove: [lastWorker] });
  if (!shrinkOne.ok) throw new Error(`${name}: removing ${lastWorker} refused`);

  const growChosen = timed(() => growCluster(request));
  const growNamed = timed(() => growCluster({ ...request, services: workerServices }));
  const shrinkBack = timed(() => checkShrink({ template, catalog, nodes: all, remove: newIds }));
  const shrinkOneNode = timed(() => checkShrink({ template, catalog, nodes: all, remove: [lastWorker] }));
  const createLarger = timed(() => create(template, NODES + GROW));
  const worst = Math.max(growChosen.medianMs, growNamed.medianMs, shrinkBack.medianMs, shrinkOneNode.medianMs);
  return {
    nodes: NODES,
    grow: GROW,
    growChosen: { ...growChosen, steps: grown.stats.steps, candidateLayouts: grown.stats.candidateLayouts },
    growWithServices: { ...growNamed, services: workerServices },
    shrinkBack,
    shrinkOneNode,
    createOfGrownSizeForReference: createLarger,
    newNodes: layoutSummary(grown.nodes),
    pass: worst < TARGET_MS,
  };
}

const results = {
  generatedAt: new Date().toISOString(),
  smoke: SMOKE,
  node: process.version,
  cpu: cpus()[0]?.model ?? "unknown",
  cpus: cpus().length,
  runs: RUNS,
  targetMs: TARGET_MS,
  cases: {
    "k8s-distributed": benchTemplate("k8s-distributed", ["base", "containerd", "kube-proxy", "kubelet"]),
    webapp: benchTemplate("webapp", ["app-config", "base", "nginx", "node-app"]),
  },
  live: LIVE
    ? await growLive({
        nodes: NODES,
        grow: GROW,
        provisioners: envNumber("BENCH_PROVISIONERS", SMOKE ? 1 : 2),
        capacity: envNumber("BENCH_CAPACITY", SMOKE ? 8 : 32),
        timeoutMs: envNumber("BENCH_TIMEOUT_S", 600) * 1000,
      })
    : "skipped (BENCH_LIVE=0)",
};

mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, JSON.stringify(results, null, 2) + "\n");
for (const [name, c] of Object.entries(results.cases)) {
  const r = c as { growChosen: { medianMs: number }; growWithServices: { medianMs: number }; shrinkBack: { medianMs: number }; pass: boolean };
  console.log(
    `${name}: ${NODES} + ${GROW} nodes: grow ${r.growChosen.medianMs} ms (services named: ${r.growWithServices.medianMs} ms), ` +
      `shrink back check ${r.shrinkBack.medianMs} ms, pass ${r.pass}`,
  );
}
if (typeof results.live === "object") {
  for (const [name, c] of Object.entries(results.live.cases)) {
    console.log(`live ${name}: grow active in ${c.grow.requestToActiveMs} ms (dry run ${c.grow.dryRunMs} ms), shrink back ${c.shrinkBack.requestToActiveMs} ms (dry run ${c.shrinkBack.dryRunMs} ms)`);
  }
}
console.log(`-> ${OUT}`);
process.exit(0);
