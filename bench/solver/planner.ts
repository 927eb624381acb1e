/**
 * Planner benchmark: plans for a 10,000-node k8s-distributed cluster (target: cluster_create < 1 s), and the node
 * actions on a 1,000-node cluster the solver lays out: grow by 100 nodes (add_nodes, with and without every old
 * node reconfigured, with the workers restarted rolling) and shrink back (remove_nodes), and a rolling restart one
 * node at a time. Planner time only (bench/solver/grow.ts times the solver's part of growing and shrinking).
 *
 * Run: node --import=tsx bench/solver/planner.ts   -> bench/results/solver-planner.json
 * Smoke: BENCH_SMOKE=1 node --import=tsx bench/solver/planner.ts (200 and 50 nodes, grow by 5, few runs)
 *      -> bench/results/solver-planner-smoke.json (not committed)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import type { PlanRequest } from "@corral/contracts";
import { checkShrink, growCluster, planAction, planGraph, solveLayout } from "@corral/solver";
import { fixtureServices, fixtureSolverCatalog, fixtureTemplate } from "../../test/helpers/fixture-catalog.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SMOKE = process.env["BENCH_SMOKE"] === "1";
const OUT = `${ROOT}bench/results/${SMOKE ? "solver-planner-smoke.json" : "solver-planner.json"}`;
const LARGE = SMOKE ? 200 : 10_000;
const MEDIUM = SMOKE ? 50 : 1_000;
const GROW = SMOKE ? 5 : 100;
const runs = (n: number): number => (SMOKE ? 3 : n);

const services = fixtureServices();
const template = fixtureTemplate("k8s-distributed");
const CONTROL = ["base", "containerd", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"];
const WORKER = ["base", "containerd", "kube-proxy", "kubelet"];
if ([...new Set([...CONTROL, ...WORKER, "coredns"])].sort().join() !== [...template.defaults.services].sort().join()) {
  throw new Error("the benchmark's layout does not hold k8s-distributed's default services");
}

/**
 * The layout the solver gives k8s-distributed's defaults: one control-plane node (the max-1 services), two
 * workers with coredns (at most 2), the rest workers without it.
 */
function layout(n: number): { id: string; services: string[] }[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `node-${String(i).padStart(5, "0")}`,
    services: i === 0 ? CONTROL : i <= 2 ? [...WORKER, "coredns"] : WORKER,
  }));
}

function measure(name: string, request: PlanRequest, runs: number): Record<string, unknown> {
  for (let i = 0; i < 3; i++) planAction(request); // warm-up
  const times: number[] = [];
  let plan = planAction(request);
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    plan = planAction(request);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const result = {
    name,
    action: plan.action,
    nodes: request.nodes.length,
    stages: plan.stages.length,
    tasks: plan.stages.reduce((a, s) => a + s.length, 0),
    runs,
    minMs: round(times[0] ?? 0),
    medianMs: round(times[Math.floor(times.length / 2)] ?? 0),
    maxMs: round(times[times.length - 1] ?? 0),
  };
  console.log(JSON.stringify(result));
  return result;
}

const round = (x: number): number => Math.round(x * 100) / 100;

const nodes = layout(LARGE);
const base = { nodes, services } as const;

// Cold first call (fresh process, nothing JIT-compiled yet) of the headline case.
const t0 = performance.now();
const cold = planAction({ ...base, action: "cluster_create" });
const coldMs = round(performance.now() - t0);
console.log(`cold cluster_create: ${coldMs} ms, ${cold.stages.length} stages`);

const L = SMOKE ? `${LARGE}` : "10k";
const M = SMOKE ? `${MEDIUM}` : "1k";
const results = [
  measure(`cluster_create ${L}`, { ...base, action: "cluster_create" }, runs(20)),
  measure(`cluster_create ${M}`, { nodes: layout(MEDIUM), services, action: "cluster_create" }, runs(50)),
  measure(`cluster_delete ${L}`, { ...base, action: "cluster_delete" }, runs(20)),
  measure(`cluster_configure_with_restart ${L}`, { ...base, action: "cluster_configure_with_restart" }, runs(20)),
  measure(`restart_services kube-apiserver ${L}`, { ...base, action: "restart_services", service: "kube-apiserver" }, runs(20)),
  measure(`stop_services etcd ${L}`, { ...base, action: "stop_services", service: "etcd" }, runs(20)),
];

/** The node actions on a cluster the solver lays out and grows, as the clusters service would plan them. */
function nodeActions(): Record<string, unknown>[] {
  const catalog = fixtureSolverCatalog();
  const naming = { clusterId: "00000042", clusterName: "bench" };
  const provider = { name: template.defaults.provider };
  const cluster = solveLayout({ template, provider, catalog, numMachines: MEDIUM, ...naming });
  const grown = growCluster({ template, provider, catalog, nodes: cluster.nodes, clusterServices: cluster.services, numMachines: GROW, ...naming });
  const all = [...cluster.nodes, ...grown.nodes];
  const added = grown.nodes.map((n) => n.id);
  if (!checkShrink({ template, catalog, nodes: all, remove: added }).ok) throw new Error("shrinking back is refused");
  const old = cluster.nodes.map((n) => n.id);
  const oldWorkers = cluster.nodes.filter((n) => n.services.includes("kubelet")).map((n) => n.id);
  const allNodes = all.map((n) => ({ id: n.id, services: n.services }));
  const grow = { action: "add_nodes", nodes: allNodes, services, addedNodes: added } as const;
  const shrink = { action: "remove_nodes", nodes: allNodes, services, removedNodes: added } as const;
  const size = `${MEDIUM} + ${GROW}`;
  return [
    measure(`add_nodes ${size}`, grow, runs(20)),
    measure(`add_nodes ${size}, every old node reconfigured`, { ...grow, changedNodes: old }, runs(20)),
    measure(
      `add_nodes ${size}, old workers restarted, rolling ${GROW} at a time`,
      { ...grow, changedNodes: oldWorkers, restart: true, rolling: { maxUnavailable: GROW }, template },
      runs(20),
    ),
    measure(`remove_nodes ${size} - ${GROW}`, shrink, runs(20)),
    measure(`remove_nodes ${size} - ${GROW}, every old node reconfigured`, { ...shrink, changedNodes: old }, runs(20)),
    measure(
      `restart_services kube-proxy ${MEDIUM}, rolling 1 at a time`,
      { nodes: cluster.nodes.map((n) => ({ id: n.id, services: n.services })), services, action: "restart_services", service: "kube-proxy", rolling: { maxUnavailable: 1 }, template },
      runs(10),
    ),
  ];
}
const nodeActionResults = nodeActions();
const g0 = performance.now();
const graph = planGraph({ ...base, action: "cluster_create" });
const graphMs = round(performance.now() - g0);

const report = {
  benchmark: "solver-planner",
  description:
    "planAction on a k8s-distributed layout (1 control-plane node with the max-1 services, the rest kubelet+kube-proxy workers, 2 of them with coredns)",
  targetMs: 1000,
  headline: { case: "cluster_create 10k", coldMs, ...(results[0] ?? {}) },
  meetsTarget: coldMs < 1000 && Number(results[0]?.maxMs ?? Infinity) < 1000,
  graph: { groups: graph.groups.length, edges: graph.edges.length, ms: graphMs },
  results,
  nodeActions: nodeActionResults,
  smoke: SMOKE,
  environment: { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model ?? "unknown" },
};
mkdirSync(`${ROOT}bench/results`, { recursive: true });
writeFileSync(OUT, `${JSON.stringify(report, null, 2)}\n`);
console.log(`wrote ${OUT}`);
