/**
 * Planner benchmark: plans for a 10,000-node k8s-distributed cluster (target: cluster_create < 1 s).
 * Run: node --import=tsx bench/solver/planner.ts   -> bench/results/solver-planner.json
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import type { PlanRequest } from "@corral/contracts";
import { planAction, planGraph } from "@corral/solver";
import { fixtureServices, fixtureTemplate } from "../../test/helpers/fixture-catalog.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const OUT = `${ROOT}bench/results/solver-planner.json`;

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

const nodes = layout(10_000);
const base = { nodes, services } as const;

// Cold first call (fresh process, nothing JIT-compiled yet) of the headline case.
const t0 = performance.now();
const cold = planAction({ ...base, action: "cluster_create" });
const coldMs = round(performance.now() - t0);
console.log(`cold cluster_create: ${coldMs} ms, ${cold.stages.length} stages`);

const results = [
  measure("cluster_create 10k", { ...base, action: "cluster_create" }, 20),
  measure("cluster_create 1k", { nodes: layout(1_000), services, action: "cluster_create" }, 50),
  measure("cluster_delete 10k", { ...base, action: "cluster_delete" }, 20),
  measure("cluster_configure_with_restart 10k", { ...base, action: "cluster_configure_with_restart" }, 20),
  measure("restart_services kube-apiserver 10k", { ...base, action: "restart_services", service: "kube-apiserver" }, 20),
  measure("stop_services etcd 10k", { ...base, action: "stop_services", service: "etcd" }, 20),
];
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
  environment: { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model ?? "unknown" },
};
mkdirSync(`${ROOT}bench/results`, { recursive: true });
writeFileSync(OUT, `${JSON.stringify(report, null, 2)}\n`);
console.log(`wrote ${OUT}`);
