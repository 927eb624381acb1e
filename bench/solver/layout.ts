/**
 * Layout and add-services solver benchmarks. Run: `node --import=tsx bench/solver/layout.ts`
 * Writes bench/results/solver-layout.json and prints a summary.
 *
 * Cases (targets from the solver issue):
 * - k8s-distributed with 10,000 nodes (< 100 ms);
 * - every test-catalog template at every size 1..200 its size bounds allow (< 5 ms each; max and p99 reported);
 * - infeasible requests with 6-8 node layouts and 60-100 machines, in the shapes Coopr's exhaustive search takes
 *   seconds to minutes on, proven infeasible with the explanation built (< 100 ms);
 * - add-services on a 1,000-node cluster (< 100 ms).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ClusterTemplate, Service, LayoutRequest } from "@corral/contracts";
import { addServices, solveLayout } from "@corral/solver";
import { fixtureSolverCatalog, fixtureTemplates } from "../../test/helpers/fixture-catalog.js";

const here = dirname(fileURLToPath(import.meta.url));
const OUT = join(here, "../results/solver-layout.json");

const templates = fixtureTemplates();
const catalog = fixtureSolverCatalog();
const request = (t: ClusterTemplate, n: number, extra: Partial<LayoutRequest> = {}): LayoutRequest => ({
  template: t,
  provider: { name: t.defaults.provider },
  catalog,
  numMachines: n,
  clusterId: "00000042",
  clusterName: "bench",
  ...extra,
});

function time<T>(fn: () => T): { ms: number; value: T } {
  const start = performance.now();
  const value = fn();
  return { ms: performance.now() - start, value };
}
/** Median of `runs` timings after `warmup` untimed runs. */
function timed(fn: () => unknown, runs = 7, warmup = 2): { medianMs: number; maxMs: number } {
  for (let i = 0; i < warmup; i++) fn();
  const samples = Array.from({ length: runs }, () => time(fn).ms).sort((a, b) => a - b);
  return { medianMs: round(samples[Math.floor(runs / 2)]!), maxMs: round(samples[runs - 1]!) };
}
const round = (ms: number) => Math.round(ms * 1000) / 1000;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const errorOf = (fn: () => unknown): { code: string; message: string } | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    const e = err as { code?: string; message: string };
    return { code: e.code ?? "?", message: e.message };
  }
};

const results: Record<string, unknown> = {
  generatedAt: new Date().toISOString(),
  node: process.version,
  cpu: cpus()[0]?.model ?? "unknown",
  cpus: cpus().length,
};

// 1. k8s-distributed with 10,000 nodes ----------------------------------------------------------------------------
const k8s = templates.find((t) => t.name === "k8s-distributed")!;
{
  const t = timed(() => solveLayout(request(k8s, 10_000)), 9, 3);
  const solution = solveLayout(request(k8s, 10_000));
  results["k8sDistributed10000"] = {
    targetMs: 100,
    ...t,
    pass: t.medianMs < 100,
    layout: solution.layout.map((l) => ({ services: l.services.length, count: l.count })),
    steps: solution.stats.steps,
  };
}

// 2. every test-catalog template at sizes 1..200 ------------------------------------------------------------------
{
  const perTemplate: Record<string, unknown> = {};
  const all: number[] = [];
  for (const t of templates) {
    const min = t.constraints?.size?.min ?? 1;
    const max = Math.min(t.constraints?.size?.max ?? Infinity, 200);
    const samples: number[] = [];
    for (let n = Math.max(1, min); n <= max; n++) {
      for (let w = 0; w < 2; w++) solveLayout(request(t, n)); // warm-up for this size
      const runs = Array.from({ length: 5 }, () => time(() => solveLayout(request(t, n))).ms).sort((a, b) => a - b);
      samples.push(runs[2]!); // median of 5 per size
    }
    samples.sort((a, b) => a - b);
    all.push(...samples);
    perTemplate[t.name] = {
      sizes: `${Math.max(1, min)}..${max}`,
      maxMs: round(samples[samples.length - 1]!),
      p99Ms: round(percentile(samples, 99)),
      medianMs: round(percentile(samples, 50)),
    };
  }
  all.sort((a, b) => a - b);
  results["fixtureTemplatesSizes1to200"] = {
    targetMs: 5,
    maxMs: round(all[all.length - 1]!),
    p99Ms: round(percentile(all, 99)),
    pass: all[all.length - 1]! < 5,
    perTemplate,
  };
}

// 3. infeasible requests with 6-8 node layouts, 60-100 machines ---------------------------------------------------
/**
 * Templates whose services give exactly L node layouts (pairwise-cantcoexist services, plus the layout of `base`
 * alone where `base` is requested):
 * - "filtered": etcd (min 1) allows only small while the request forces medium, so it is on no layout (Coopr's
 *   search is then exhaustive: 24 s for L=6, n=100; 254 s for L=8, n=60);
 * - "capped": no unconstrained service, every layout holds a service with a max, and the maxima add up to fewer
 *   than n machines;
 * - "minimums": two services with minimums above n/2 that never share a node;
 * - "coupled": s0 (min n/2) must coexist with s1 (max 3).
 */
function infeasibleTemplate(L: number, n: number, shape: "filtered" | "capped" | "minimums" | "coupled"): ClusterTemplate {
  const services: Record<string, { hardwaretypes?: string[]; quantities?: { min?: number; max?: number } }> = {};
  const must: string[][] = [];
  let units: string[][]; // services of each non-base layout
  if (shape === "capped") {
    units = Array.from({ length: L }, (_, i) => [`s${i}`]);
    for (const [u] of units) services[u!] = { quantities: { max: Math.floor((n - 1) / L) } };
  } else if (shape === "coupled") {
    units = [["s0", "s1"], ...Array.from({ length: L - 2 }, (_, i) => [`s${i + 2}`])];
    must.push(["s0", "s1"]);
    services["s0"] = { quantities: { min: Math.floor(n / 2) } };
    services["s1"] = { quantities: { max: 3 } };
  } else {
    units = Array.from({ length: L - 1 }, (_, i) => [`s${i}`]);
    for (const [u] of units) services[u!] = { quantities: { max: Math.floor(n / 4) } };
    if (shape === "minimums") {
      services["s0"] = { quantities: { min: Math.ceil(n / 2) + 1 } };
      services["s1"] = { quantities: { min: Math.ceil(n / 2) + 1 } };
    }
  }
  const cant: string[][] = [];
  for (let i = 0; i < units.length; i++) for (let j = i + 1; j < units.length; j++) cant.push([units[i]![0]!, units[j]![0]!]);
  const names = [...(shape === "capped" ? [] : ["base"]), ...units.flat()];
  if (shape === "filtered") {
    names.push("etcd");
    services["etcd"] = { hardwaretypes: ["small"], quantities: { min: 1, max: 1 } };
  }
  return {
    name: `infeasible-${shape}-${L}`,
    compatibility: { hardwaretypes: [], imagetypes: [], services: [] },
    defaults: { services: names, provider: "aws-eu-west-1", config: {}, hardwaretype: "medium", imagetype: "ubuntu24" },
    constraints: { services, layout: { mustcoexist: must, cantcoexist: cant } },
  };
}
{
  const extraServices = Array.from({ length: 10 }, (_, i) => ({ ...catalog.services.find((s) => s.name === "base")!, name: `s${i}` }));
  const benchCatalog = { ...catalog, services: [...catalog.services, ...extraServices] };
  const cases: unknown[] = [];
  let worst = 0;
  for (const shape of ["filtered", "capped", "minimums", "coupled"] as const) {
    for (const L of [6, 7, 8]) {
      for (const n of [60, 80, 100]) {
        const tpl = infeasibleTemplate(L, n, shape);
        const req = { ...request(tpl, n), catalog: benchCatalog };
        const error = errorOf(() => solveLayout(req));
        // The same layouts with loose bounds (every unit keeps a bound, so each Coopr layout has its own
        // signature and is kept): how many node layouts the request has.
        const relaxed = structuredClone(tpl);
        relaxed.defaults.services = relaxed.defaults.services.filter((x) => x !== "etcd");
        relaxed.constraints!.services = Object.fromEntries(
          relaxed.defaults.services.filter((x) => x !== "base").map((x) => [x, { quantities: { max: n } }]),
        );
        const layoutCount = solveLayout({ ...req, template: relaxed }).stats.candidateLayouts;
        if (layoutCount !== L) throw new Error(`${shape}: expected ${L} node layouts, got ${layoutCount}`);
        if (error === undefined || error.code !== "bad_request") throw new Error(`${shape} L=${L} n=${n} should be infeasible: ${JSON.stringify(error)}`);
        const t = timed(() => errorOf(() => solveLayout(req)), 5, 1);
        worst = Math.max(worst, t.medianMs);
        cases.push({ shape, nodeLayouts: L, machines: n, ...t, error: error.message });
      }
    }
  }
  results["infeasible"] = { targetMs: 100, worstMedianMs: worst, pass: worst < 100, cases };
}

// 4. add-services on a 1,000-node cluster -------------------------------------------------------------------------
{
  const cluster = solveLayout(request(k8s, 1000));
  const base = { template: k8s, catalog, nodes: cluster.nodes, clusterServices: cluster.services };
  const scenarios: Record<string, string[]> = {
    "monitoring stack to the control plane": ["prometheus", "grafana", "postgresql"],
    "ingress-nginx to every worker": ["ingress-nginx"],
  };
  const out: unknown[] = [];
  let worst = 0;
  for (const [name, services] of Object.entries(scenarios)) {
    const t = timed(() => addServices({ ...base, services }), 9, 3);
    const r = addServices({ ...base, services });
    worst = Math.max(worst, t.medianMs);
    out.push({ name, ...t, changedNodes: r.changedNodes.length, steps: r.stats.steps });
  }
  // An unconstrained service goes to every node, and a capped one that cannot share a node with it forces the
  // first to back off (the shape in which Coopr's search loses a service, at scale).
  const tpl = structuredClone(k8s);
  tpl.compatibility.services.push("vault-agent");
  tpl.constraints!.services!["node-exporter"] = { quantities: { max: 1000 } };
  tpl.constraints!.services!["vault-agent"] = { quantities: { min: 300 } };
  tpl.constraints!.layout!.cantcoexist!.push(["node-exporter", "vault-agent"]);
  const backoff = { ...base, template: tpl, services: ["node-exporter", "vault-agent"] };
  const t = timed(() => addServices(backoff), 9, 3);
  const r = addServices(backoff);
  worst = Math.max(worst, t.medianMs);
  out.push({
    name: "node-exporter (max 1000) backs off so vault-agent (min 300, cantcoexist) fits",
    ...t,
    changedNodes: r.changedNodes.length,
    placements: r.placements.map((p) => ({ service: p.service, nodes: p.nodeIds.length })),
    steps: r.stats.steps,
  });
  results["addServices1000"] = { targetMs: 100, worstMedianMs: worst, pass: worst < 100, cases: out };
}

// 5. wide templates (no target): many constrained services, where Coopr enumerates 2^m service sets ---------------
{
  const plain = (name: string): Service => ({ ...catalog.services.find((s) => s.name === "base")!, name });
  const wide = (m: number, shape: "hardware-only" | "chain"): LayoutRequest => {
    const names = Array.from({ length: m }, (_, i) => `w${String(i).padStart(2, "0")}`);
    const services: Record<string, { hardwaretypes?: string[]; quantities?: { min?: number; max?: number } }> = {};
    const cant: string[][] = [];
    if (shape === "hardware-only") {
      names.forEach((s, i) => (services[s] = { hardwaretypes: i % 2 ? ["large", "medium"] : ["large"] }));
      services[names[0]!]!.quantities = { max: 3 };
    } else {
      names.forEach((s, i) => (services[s] = { quantities: i % 3 === 0 ? { min: 1, max: 2 } : { max: 3 } }));
      for (let i = 1; i < m; i++) cant.push([names[i - 1]!, names[i]!]);
    }
    return {
      ...request(
        {
          name: `wide-${shape}-${m}`,
          compatibility: { hardwaretypes: [], imagetypes: [], services: [] },
          defaults: { services: ["base", ...names], provider: "aws-eu-west-1", config: {}, imagetype: "ubuntu24" },
          constraints: { services, layout: { cantcoexist: cant } },
        },
        100,
      ),
      catalog: { ...catalog, services: [...catalog.services, ...names.map(plain)] },
    };
  };
  const cases: unknown[] = [];
  for (const [shape, m] of [["hardware-only", 20], ["hardware-only", 30], ["chain", 14], ["chain", 18], ["chain", 20]] as const) {
    const req = wide(m, shape);
    const t = timed(() => solveLayout(req), 5, 1);
    const s = solveLayout(req);
    cases.push({ shape, constrainedServices: m, machines: 100, ...t, candidateLayouts: s.stats.candidateLayouts, steps: s.stats.steps });
  }
  results["wideTemplates"] = { note: "no target; Coopr enumerates 2^m subsets of the constrained services here", cases };
}

mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, `${JSON.stringify(results, null, 2)}\n`);
const summary = (key: string, fields: string[]) => {
  const r = results[key] as Record<string, unknown>;
  console.log(`${key}: ${fields.map((f) => `${f}=${JSON.stringify(r[f])}`).join(" ")}`);
};
summary("k8sDistributed10000", ["medianMs", "maxMs", "pass"]);
summary("fixtureTemplatesSizes1to200", ["maxMs", "p99Ms", "pass"]);
summary("infeasible", ["worstMedianMs", "pass"]);
summary("addServices1000", ["worstMedianMs", "pass"]);
for (const c of (results["wideTemplates"] as { cases: Record<string, unknown>[] }).cases) {
  console.log(`wideTemplates ${c["shape"]} m=${c["constrainedServices"]}: medianMs=${c["medianMs"]} layouts=${c["candidateLayouts"]}`);
}
console.log(`wrote ${OUT}`);
