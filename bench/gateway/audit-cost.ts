/**
 * What the audit log costs the REST path (issue 28: under 5%). Two Corrals as `npm start` runs them
 * (launched-corral.ts), from this tree, one with `audit.enabled=false`, the other with it on (the gateway records
 * every change and refusal); the same workload on both, every measured run alternating between them (off/on, then
 * on/off), so load others put on the machine falls on both; the CPU time the gateway, the answering service and
 * nats-server (which stores the entries) spent per request is recorded with each run, which shared load does not
 * change. Cases:
 * - read: GET /v2/providers/bench (not recorded: what the gateway's check costs a read);
 * - create: POST /v2/clusters?dryRun=true (recorded; the create's checks, layout and plan, nothing stored);
 * - mix: in turn a PUT /v2/providers/bench (an update, stored), a DELETE /v2/providers/absent (a 404), a dry-run
 *   create and a read: three of four recorded.
 * After the runs the audit stream of each arm is counted: the on arm's holds an entry per recorded request, the
 * off arm's none. Writes bench/results/gateway-audit-cost.json.
 *
 * Run: node --import=tsx bench/gateway/audit-cost.ts
 * Smoke (1 short round of each case; writes bench/results/gateway-audit-cost-smoke.json, not for the record):
 *   BENCH_SMOKE=1 node --import=tsx bench/gateway/audit-cost.ts
 * Env: BENCH_DURATION_S (5 per run), BENCH_ROUNDS (4 pairs per case), BENCH_CONNECTIONS (64).
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { decode, entriesOfAuditMessage, streams } from "@corral/contracts";
import { connectNats, envNameOf } from "@corral/shared";
import { createClusterCatalog } from "../../test/helpers/cluster-fixture.js";
import { createProviders, IDENTITY, pluginTypesRegistered } from "./bench-providers.js";
import { launchCorral, type LaunchedCorral } from "./launched-corral.js";
import { cpuSeconds } from "./process-cpu.js";
import { ensureWrk, runWrk, type LoadOptions, type LoadResult } from "./wrk.js";

const SMOKE = process.env["BENCH_SMOKE"] === "1";
const DURATION_S = Number(process.env["BENCH_DURATION_S"] ?? (SMOKE ? 1 : 5));
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? (SMOKE ? 1 : 4));
const CONNECTIONS = Number(process.env["BENCH_CONNECTIONS"] ?? (SMOKE ? 4 : 64));
const OUT = SMOKE ? "gateway-audit-cost-smoke.json" : "gateway-audit-cost.json";
/** The issue's target: throughput with the audit log on within this share of the same with it off. */
const TARGET = { maxThroughputDifference: 0.05 };
const HERE = new URL("../..", import.meta.url).pathname;

type ArmName = "off" | "on";

interface Arm {
  name: ArmName;
  corral: LaunchedCorral;
  origin: string;
  /** The tenant whose catalog the dry-run create plans, and its template. */
  createTenant: string;
  template: string;
}

interface Run extends LoadResult {
  loadAverage1m: number;
  /** CPU milliseconds per 1000 answers of the gateway, the answering services and nats-server, and their total. */
  cpuMsPerKRequests: Record<string, number>;
}

/** One request of a case: what wrk sends (every header given: a script's request replaces wrk's `-H` headers). */
interface BenchRequest {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  headers: Record<string, string>;
  body?: unknown;
  /** The status it must answer. */
  status: number;
}

interface Case {
  requests: (arm: Arm) => BenchRequest[];
  /** Processes whose CPU is counted beside the gateway and nats-server. */
  services: string[];
}

const scratch = mkdtempSync(join(tmpdir(), "corral-bench-audit-"));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const round2 = (x: number) => Math.round(x * 100) / 100;
const round4 = (x: number) => Math.round(x * 10000) / 10000;

const PROVIDER = { name: "bench", providertype: "digitalocean", provisioner: { region: "ams3" } };
const read: BenchRequest = { method: "GET", path: "/v2/providers/bench", headers: IDENTITY, status: 200 };
const update: BenchRequest = { method: "PUT", path: "/v2/providers/bench", headers: IDENTITY, body: PROVIDER, status: 200 };
const removeAbsent: BenchRequest = { method: "DELETE", path: "/v2/providers/absent", headers: IDENTITY, status: 404 };
const dryRunCreate = (arm: Arm): BenchRequest => ({
  method: "POST",
  path: "/v2/clusters?dryRun=true",
  headers: { "Service-UserID": "admin", "Service-TenantID": arm.createTenant },
  body: { name: "bench-c1", clusterTemplate: arm.template, numMachines: "3", description: "audited", services: [] },
  status: 200,
});

const CASES: Record<string, Case> = {
  read: { requests: () => [read], services: ["tenancy"] },
  create: { requests: (arm) => [dryRunCreate(arm)], services: ["clusters", "solver"] },
  mix: { requests: (arm) => [update, removeAbsent, dryRunCreate(arm), read], services: ["tenancy", "clusters", "solver"] },
};

/** A wrk script sending `requests` in turn (each wrk thread its own turn). */
function scriptOf(name: string, requests: BenchRequest[]): string {
  const file = join(scratch, `${name}.lua`);
  const lua = (text: string) => JSON.stringify(text);
  const formatted = requests.map((r) => {
    const headers = { ...r.headers, ...(r.body !== undefined ? { "Content-Type": "application/json" } : {}) };
    const table = `{${Object.entries(headers)
      .map(([k, v]) => `[${lua(k)}] = ${lua(v)}`)
      .join(", ")}}`;
    return `wrk.format(${lua(r.method)}, ${lua(r.path)}, ${table}${r.body !== undefined ? `, ${lua(JSON.stringify(r.body))}` : ""})`;
  });
  const script = [
    "local requests = {}",
    "local i = 0",
    `init = function(args) requests = {${formatted.join(", ")}} end`,
    "request = function() i = i % #requests + 1; return requests[i] end",
  ];
  writeFileSync(file, script.join("\n") + "\n");
  return file;
}

/** Each request of each case answers what it must on `arm` before anything is measured. */
async function checkAnswers(arm: Arm): Promise<void> {
  for (const [name, c] of Object.entries(CASES)) {
    for (const r of c.requests(arm)) {
      const res = await fetch(arm.origin + r.path, {
        method: r.method,
        headers: { ...r.headers, ...(r.body !== undefined ? { "content-type": "application/json" } : {}) },
        ...(r.body !== undefined ? { body: JSON.stringify(r.body) } : {}),
      });
      const text = await res.text();
      if (res.status !== r.status) throw new Error(`${arm.name}: ${name}'s ${r.method} ${r.path} answers ${res.status}, not ${r.status}: ${text}`);
    }
  }
}

const wrk = ensureWrk();
const load: LoadOptions = { connections: CONNECTIONS, durationSeconds: DURATION_S };

/** One wrk run of case `name` against `arm`, with the CPU time its processes used meanwhile. */
async function measured(arm: Arm, name: string, options: LoadOptions = load): Promise<Run> {
  const c = CASES[name]!;
  const all = arm.corral.pids();
  const pids = Object.fromEntries(["gateway", ...c.services, "nats-server"].flatMap((p) => (all[p] ? [[p, all[p]!]] : [])));
  const loadAverage1m = round2(loadavg()[0] ?? 0);
  const before = cpuSeconds(pids);
  const result = await runWrk(wrk, arm.origin + "/v2/status", {}, { ...options, script: scriptOf(`${arm.name}-${name}`, c.requests(arm)) });
  const after = cpuSeconds(pids);
  const perK = (seconds: number) => round2((seconds * 1e6) / Math.max(1, result.requests));
  const used = (p: string) => (after[p] ?? 0) - (before[p] ?? 0);
  const byProcess = Object.fromEntries(Object.keys(pids).map((p) => [p, perK(used(p))]));
  return { loadAverage1m, ...result, cpuMsPerKRequests: { ...byProcess, total: perK(Object.keys(pids).reduce((sum, p) => sum + used(p), 0)) } };
}

/** Entries in the arm's audit stream (a message holds one entry or a batch of them). */
async function auditEntries(arm: Arm): Promise<number> {
  const nc = await connectNats({ url: arm.corral.natsUrl, name: "bench-audit-count" });
  try {
    const { state } = await (await jetstreamManager(nc)).streams.info(streams.audit);
    if (state.messages === 0) return 0;
    const messages = await (await jetstream(nc).consumers.get(streams.audit)).consume();
    let entries = 0;
    for await (const m of messages) {
      entries += entriesOfAuditMessage(decode(m.data)).length;
      if (m.seq >= state.last_seq) break;
    }
    await messages.close();
    return entries;
  } finally {
    await nc.close();
  }
}

async function armOf(name: ArmName): Promise<Arm> {
  const corral = await launchCorral({ env: { [envNameOf("audit.enabled")]: String(name === "on") } });
  try {
    await createProviders(corral);
    await pluginTypesRegistered(corral.baseUrl);
    const catalog = await createClusterCatalog(corral.baseUrl, { tenant: "bench-create", workers: 0, services: [{ name: "base", actions: { install: "true" } }] });
    return { name, corral, origin: new URL(corral.baseUrl).origin, createTenant: catalog.tenant, template: catalog.template };
  } catch (err) {
    await corral.stop();
    throw err;
  }
}

const arms: Arm[] = [];
try {
  arms.push(await armOf("off"), await armOf("on"));
  const [off, on] = arms as [Arm, Arm];
  for (const arm of arms) await checkAnswers(arm);
  const entriesBefore = { off: await auditEntries(off), on: await auditEntries(on) };
  const cases: Record<string, unknown> = {};
  let recordedRequests = 0;
  for (const [name, c] of Object.entries(CASES)) {
    // Warm-up (JIT, caches, connections) of both, not recorded.
    for (const arm of arms) await measured(arm, name, { ...load, durationSeconds: SMOKE ? 1 : 2 });
    const pairs: Array<Record<ArmName, Run>> = [];
    for (let i = 0; i < ROUNDS; i++) {
      const order = i % 2 === 0 ? [off, on] : [on, off];
      const runs: Partial<Record<ArmName, Run>> = {};
      for (const arm of order) runs[arm.name] = await measured(arm, name);
      pairs.push(runs as Record<ArmName, Run>);
      const line = (r: Run) => `${r.requestsPerSecond}/s p99 ${r.latencyP99Ms} ms cpu ${r.cpuMsPerKRequests["total"]} ms/1k`;
      console.log(`${name} round ${i + 1}: off ${line(runs.off!)}, on ${line(runs.on!)} (load ${runs.on!.loadAverage1m})`);
    }
    const requests = c.requests(on);
    const recordedShare = requests.filter((r) => r.method !== "GET").length / requests.length;
    recordedRequests += Math.round(pairs.reduce((n, p) => n + p.on.requests, 0) * recordedShare);
    const summary = (arm: ArmName) => ({
      requestsPerSecond: median(pairs.map((p) => p[arm].requestsPerSecond)),
      latencyP50Ms: median(pairs.map((p) => p[arm].latencyP50Ms)),
      latencyP99Ms: median(pairs.map((p) => p[arm].latencyP99Ms)),
      gatewayCpuMsPerKRequests: median(pairs.map((p) => p[arm].cpuMsPerKRequests["gateway"] ?? Number.NaN)),
      natsCpuMsPerKRequests: median(pairs.map((p) => p[arm].cpuMsPerKRequests["nats-server"] ?? Number.NaN)),
      cpuMsPerKRequests: median(pairs.map((p) => p[arm].cpuMsPerKRequests["total"] ?? Number.NaN)),
    });
    // Ratios per pair (same moment, same load), then their median.
    const throughputRatio = round4(median(pairs.map((p) => p.on.requestsPerSecond / p.off.requestsPerSecond)));
    const cpuRatio = round4(median(pairs.map((p) => (p.on.cpuMsPerKRequests["total"] ?? 0) / (p.off.cpuMsPerKRequests["total"] ?? 1))));
    cases[name] = {
      requests: requests.map((r) => `${r.method} ${r.path}`),
      recordedShare,
      off: summary("off"),
      on: summary("on"),
      throughputRatio,
      p99Ratio: round4(median(pairs.map((p) => p.on.latencyP99Ms / p.off.latencyP99Ms))),
      cpuPerRequestRatio: cpuRatio,
      meetsTarget: 1 - throughputRatio < TARGET.maxThroughputDifference,
      meetsTargetByCpu: cpuRatio - 1 < TARGET.maxThroughputDifference,
      /** Answers of 4xx and 5xx over all answers: the mix's DELETE answers 404, anything else is an error. */
      expectedNon2xxShare: requests.filter((r) => r.status >= 400).length / requests.length,
      non2xxShare: round4(pairs.reduce((n, p) => n + p.off.non2xx + p.on.non2xx, 0) / Math.max(1, pairs.reduce((n, p) => n + p.off.requests + p.on.requests, 0))),
      socketErrors: pairs.reduce((n, p) => n + p.off.socketErrors + p.on.socketErrors, 0),
      runs: pairs,
    };
  }
  // The gateway publishes in batches every 100 ms: let the last one land.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const stored = { off: (await auditEntries(off)) - entriesBefore.off, on: (await auditEntries(on)) - entriesBefore.on };
  const revision = (await promisify(execFile)("git", ["rev-parse", "--short", "HEAD"], { cwd: HERE }).catch(() => ({ stdout: "" }))).stdout.trim();
  const results = {
    date: new Date().toISOString(),
    smoke: SMOKE,
    revision,
    machine: "2 cores shared by wrk, both Corrals (each: nats-server, redis-server, every service, a provisioner) and other work",
    connections: CONNECTIONS,
    durationSeconds: DURATION_S,
    rounds: ROUNDS,
    target: TARGET,
    cases,
    /**
     * Entries the runs (warm-ups included) added to each arm's audit stream: none with the audit log off; with it on
     * at least the measured requests that change something (`recordedRequestsMeasured`).
     */
    auditEntriesStored: stored,
    recordedRequestsMeasured: recordedRequests,
    loadAverageAtEnd: loadavg().map(round2),
  };
  mkdirSync(new URL("../results/", import.meta.url), { recursive: true });
  writeFileSync(new URL(`../results/${OUT}`, import.meta.url), JSON.stringify(results, null, 2) + "\n");
  console.log(JSON.stringify({ ...results, cases: Object.fromEntries(Object.entries(cases).map(([k, v]) => [k, { ...(v as object), runs: undefined }])) }, null, 2));
  if (stored.off !== 0) throw new Error(`the arm with the audit log off stored ${stored.off} entries`);
  if (stored.on < recordedRequests) throw new Error(`the arm with the audit log on stored ${stored.on} entries for ${recordedRequests} recorded requests`);
} finally {
  await Promise.all(arms.map((arm) => arm.corral.stop()));
  rmSync(scratch, { recursive: true, force: true });
}
