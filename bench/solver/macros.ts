/**
 * Macro benchmark: the k8s-distributed config expanded for every node of a 1,000-node cluster
 * (target < 1 s), including building the cluster index and parsing the config.
 * Run: node --import=tsx bench/solver/macros.ts   -> bench/results/solver-macros.json
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import type { Json, MacroNode } from "@corral/contracts";
import { compileConfig, createMacroContext, expandConfig } from "@corral/solver";
import { fixtureTemplate } from "../../test/helpers/fixture-catalog.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const OUT = `${ROOT}bench/results/solver-macros.json`;

const template = fixtureTemplate("k8s-distributed");
// With every optional service, as the solver lays them out: the monitoring stack joins the control plane,
// ingress-nginx the workers, node-exporter is everywhere, coredns on two workers.
const CONTROL = [
  "base", "containerd", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler",
  "grafana", "node-exporter", "postgresql", "prometheus",
];
const WORKER = ["base", "containerd", "ingress-nginx", "kube-proxy", "kubelet", "node-exporter"];

function cluster(n: number): MacroNode[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `node-${i}`,
    nodenum: 1000 + i,
    services: i === 0 ? CONTROL : i <= 2 ? [...WORKER, "coredns"] : WORKER,
    properties: {
      hostname: `k8s17-${1000 + i}.k8s.example.net`,
      ipaddresses: { bind_v4: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, access_v4: `198.51.${(i >> 8) & 255}.${i & 255}` },
    },
  }));
}

/** Index the cluster, parse the config, expand it for every node: what a scheduler does per cluster version. */
function expandAll(nodes: MacroNode[], config: Json): { ms: number; expanded: number } {
  const t0 = performance.now();
  const ctx = createMacroContext({ nodes, owner: "bench" });
  const compiled = compileConfig(config);
  let expanded = 0;
  for (const node of nodes) {
    if (expandConfig(compiled, ctx, node.id) !== config) expanded++;
  }
  if (expanded !== nodes.length) throw new Error("a node's config was not expanded");
  return { ms: performance.now() - t0, expanded };
}

const round = (x: number): number => Math.round(x * 100) / 100;

function measure(name: string, nodes: MacroNode[], config: Json, runs: number): Record<string, unknown> {
  const cold = expandAll(nodes, config).ms;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(expandAll(nodes, config).ms);
  times.sort((a, b) => a - b);
  const r = {
    name,
    nodes: nodes.length,
    runs,
    coldMs: round(cold),
    minMs: round(times[0] ?? 0),
    medianMs: round(times[Math.floor(times.length / 2)] ?? 0),
    maxMs: round(times[times.length - 1] ?? 0),
    perNodeUs: round(((times[Math.floor(times.length / 2)] ?? 0) * 1000) / nodes.length),
  };
  console.log(JSON.stringify(r));
  return r;
}

const config = template.defaults.config;
const nodes1k = cluster(1_000);
// A config whose macros list every node (output grows with n per node: n² characters overall).
const wide: Json = {
  ...config,
  all_hosts: "%host.service.base%",
  all_kubelets: "%join(map(ip.service.kubelet,'$:10250'),',')%",
  me: "%instance.self.service.kubelet% of %num.service.kubelet%",
};

const results = [
  measure("k8s-distributed config, 1,000 nodes", nodes1k, config, 20),
  measure("k8s-distributed config, 10,000 nodes", cluster(10_000), config, 5),
  measure("config with all-node lists, 1,000 nodes", nodes1k, wide, 5),
];
const headline = results[0] ?? {};
const report = {
  benchmark: "solver-macros",
  description:
    "createMacroContext + compileConfig + expandConfig for every node; the control plane holds the max-1 services, two workers coredns, the rest are plain workers",
  targetMs: 1000,
  headline,
  meetsTarget: Number(headline.coldMs ?? Infinity) < 1000 && Number(headline.maxMs ?? Infinity) < 1000,
  results,
  environment: { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model ?? "unknown" },
};
mkdirSync(`${ROOT}bench/results`, { recursive: true });
writeFileSync(OUT, `${JSON.stringify(report, null, 2)}\n`);
console.log(`wrote ${OUT}`);
