/**
 * REST throughput with requests validated against the endpoint table's declarations (this tree) against an earlier
 * revision that parsed them by hand (issue 26: the read and create paths within noise). Both revisions run at once,
 * each Corral as `npm start` runs it (validation-serve.ts, launched from its own tree), and every measured run
 * alternates between them (before/after, then after/before), so load others put on the machine falls on both; the
 * CPU time the gateway, the answering service and nats-server spent per request is recorded with each run, which
 * shared load does not change. Cases: a read (GET /v2/providers/bench, tenancy) and a create
 * (POST /v2/clusters?dryRun=true: the create's whole validation, checks, layout and plan, nothing stored, so every
 * request does the same work). On a machine others load, the two arms' throughput drifts apart by far more than
 * validation costs, so the run also times, in this process, what validating one request of each case takes (the
 * validators serveEndpoints compiles from the rows), which load barely changes. Writes
 * bench/results/gateway-validation.json.
 *
 * The earlier revision is a tree of its own, for example the commit before the declarations:
 *
 *   mkdir -p /tmp/before && git archive <commit> | tar -x -C /tmp/before
 *   mkdir /tmp/before/node_modules && for e in node_modules/* node_modules/.bin; do [ "$(basename $e)" = @corral ] ||
 *     ln -s "$PWD/$e" /tmp/before/node_modules/; done
 *   mkdir /tmp/before/node_modules/@corral && for e in node_modules/@corral/*; do ln -s "$(readlink $e)" /tmp/before/$e; done
 *   mkdir -p /tmp/before/.corral && ln -s "$PWD/.corral/bin" /tmp/before/.corral/bin
 *   cp bench/gateway/validation-serve.ts /tmp/before/bench/gateway/
 *
 * Run: BENCH_BEFORE=/tmp/before BENCH_BEFORE_LABEL=<commit> node --import=tsx bench/gateway/validation-before-after.ts
 * Smoke (1 short round of each case, any load; both arms from this tree unless BENCH_BEFORE is given; writes
 * bench/results/gateway-validation-smoke.json, not for the record): BENCH_SMOKE=1 node --import=tsx bench/gateway/validation-before-after.ts
 * Env: BENCH_DURATION_S (5 per run), BENCH_ROUNDS (4 pairs per case), BENCH_CONNECTIONS (64).
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { endpoints, requestValidator, type EndpointName } from "@corral/contracts";
import { IDENTITY } from "./bench-providers.js";
import { cpuSeconds } from "./process-cpu.js";
import { ensureWrk, runWrk, type LoadOptions, type LoadResult } from "./wrk.js";
import { median } from "../stats.js";

const SMOKE = process.env["BENCH_SMOKE"] === "1";
const HERE = new URL("../..", import.meta.url).pathname;
const BEFORE = process.env["BENCH_BEFORE"] ?? (SMOKE ? HERE : undefined);
if (!BEFORE) throw new Error("BENCH_BEFORE: the directory of the earlier revision's tree (see the head of this file)");
const BEFORE_LABEL = process.env["BENCH_BEFORE_LABEL"] ?? BEFORE;
const DURATION_S = Number(process.env["BENCH_DURATION_S"] ?? (SMOKE ? 1 : 5));
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? (SMOKE ? 1 : 4));
const CONNECTIONS = Number(process.env["BENCH_CONNECTIONS"] ?? (SMOKE ? 4 : 64));
const OUT = SMOKE ? "gateway-validation-smoke.json" : "gateway-validation.json";
/** The issue's target: each path's throughput after within this share of before's (the runs' noise on this machine). */
const TARGET = { maxThroughputDifference: 0.05 };

interface Arm {
  label: string;
  baseUrl: string;
  createTenant: string;
  template: string;
  pids: Record<string, number>;
  child: ChildProcess;
}

interface Run extends LoadResult {
  loadAverage1m: number;
  /** CPU milliseconds per 1000 answers of the gateway, the answering service and nats-server, and their total. */
  cpuMsPerKRequests: Record<string, number>;
}

interface Case {
  /** Path under the origin, with the query. */
  path: string;
  /** The service that answers it (its CPU is counted). */
  service: string;
  /** A JSON body, POSTed (absent: a GET). */
  body?: (arm: Arm) => unknown;
  headers: (arm: Arm) => Record<string, string>;
}

const scratch = mkdtempSync(join(tmpdir(), "corral-bench-validation-"));
const round2 = (x: number) => Math.round(x * 100) / 100;
const round4 = (x: number) => Math.round(x * 10000) / 10000;

/** A wrk script that POSTs `body` as JSON. */
function postScript(name: string, body: unknown): string {
  const file = join(scratch, `${name}.lua`);
  const lua = [`wrk.method = "POST"`, `wrk.body = ${JSON.stringify(JSON.stringify(body))}`, `wrk.headers["Content-Type"] = "application/json"`];
  writeFileSync(file, lua.join("\n") + "\n");
  return file;
}

const CASES: Record<string, Case> = {
  read: { path: "/v2/providers/bench", service: "tenancy", headers: () => IDENTITY },
  create: {
    path: "/v2/clusters?dryRun=true",
    service: "clusters",
    headers: (arm) => ({ "Service-UserID": "admin", "Service-TenantID": arm.createTenant }),
    body: (arm) => ({ name: "bench-c1", clusterTemplate: arm.template, numMachines: "3", description: "validated", services: [] }),
  },
};

/** Starts validation-serve.ts in `dir` and waits for its READY line. */
function startArm(label: string, dir: string): Promise<Arm> {
  const child = spawn(process.execPath, ["--import=tsx", "bench/gateway/validation-serve.ts"], { cwd: dir, stdio: ["pipe", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label}: not ready after 180 s`)), 180_000);
    child.once("exit", (code) => reject(new Error(`${label}: validation-serve.ts exited (${code}) before it was ready`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (!line.startsWith("READY ")) return;
      clearTimeout(timer);
      resolve({ label, child, ...(JSON.parse(line.slice("READY ".length)) as Omit<Arm, "label" | "child">) });
    });
  });
}

async function stopArm(arm: Arm): Promise<void> {
  const exited = new Promise<void>((resolve) => arm.child.once("exit", () => resolve()));
  arm.child.stdin?.end();
  const timer = setTimeout(() => arm.child.kill("SIGTERM"), 60_000);
  await exited;
  clearTimeout(timer);
}

const wrk = ensureWrk();
const load: LoadOptions = { connections: CONNECTIONS, durationSeconds: DURATION_S };

/** One wrk run of `c` against `arm`, with the CPU time its processes used meanwhile. */
async function measured(arm: Arm, c: Case, options: LoadOptions = load): Promise<Run> {
  const pids = Object.fromEntries(["gateway", c.service, "nats-server"].flatMap((name) => (arm.pids[name] ? [[name, arm.pids[name]!]] : [])));
  const loadAverage1m = round2(loadavg()[0] ?? 0);
  const before = cpuSeconds(pids);
  const url = new URL(c.path, arm.baseUrl).href;
  const script = c.body ? postScript(`${arm.label}-${c.service}`, c.body(arm)) : undefined;
  const result = await runWrk(wrk, url, c.headers(arm), { ...options, ...(script ? { script } : {}) });
  const after = cpuSeconds(pids);
  const perK = (seconds: number) => round2((seconds * 1e6) / Math.max(1, result.requests));
  const byProcess = Object.fromEntries(Object.keys(pids).map((name) => [name, perK((after[name] ?? 0) - (before[name] ?? 0))]));
  const total = perK(Object.keys(pids).reduce((sum, name) => sum + (after[name] ?? 0) - (before[name] ?? 0), 0));
  return { loadAverage1m, ...result, cpuMsPerKRequests: { ...byProcess, total } };
}

/** Each case answers 200 on both arms before anything is measured (a refusal would be measured as throughput). */
async function checkAnswers(arm: Arm): Promise<void> {
  for (const [name, c] of Object.entries(CASES)) {
    const res = await fetch(new URL(c.path, arm.baseUrl), {
      method: c.body ? "POST" : "GET",
      headers: { ...c.headers(arm), ...(c.body ? { "content-type": "application/json" } : {}) },
      ...(c.body ? { body: JSON.stringify(c.body(arm)) } : {}),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${arm.label}: ${name} answers ${res.status}, not 200: ${text}`);
  }
}

/** Microseconds one request's validation takes (serveEndpoints runs the same validator), over `n` requests. */
function validationMicros(name: EndpointName, request: unknown, n: number): number {
  const validate = requestValidator(endpoints[name]);
  for (let i = 0; i < Math.min(n, 10_000); i++) validate(request); // warm-up
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) validate(request);
  return round4(Number(process.hrtime.bigint() - started) / 1000 / n);
}

const identity = { userId: "admin", tenant: "bench-create", role: "admin" };
const VALIDATIONS = SMOKE ? 10_000 : 500_000;
const perRequestValidation = {
  read: validationMicros("tenancy.catalog.providers.get", { identity, params: { name: "bench" }, query: {} }, VALIDATIONS),
  create: validationMicros(
    "clusters.create",
    {
      identity,
      params: {},
      query: { dryRun: "true" },
      body: { name: "bench-c1", clusterTemplate: "t1", numMachines: "3", description: "validated", services: [] },
    },
    VALIDATIONS,
  ),
};
console.log(`validation per request: read ${perRequestValidation.read} us, create ${perRequestValidation.create} us`);

const arms: Arm[] = [];
try {
  arms.push(await startArm("before", BEFORE), await startArm("after", HERE));
  const [before, after] = arms as [Arm, Arm];
  for (const arm of arms) await checkAnswers(arm);
  const cases: Record<string, unknown> = {};
  for (const [name, c] of Object.entries(CASES)) {
    // Warm-up (JIT, caches, connections) of both, not recorded.
    for (const arm of arms) await measured(arm, c, { ...load, durationSeconds: SMOKE ? 1 : 2 });
    const pairs: Array<{ before: Run; after: Run }> = [];
    for (let i = 0; i < ROUNDS; i++) {
      const order = i % 2 === 0 ? [before, after] : [after, before];
      const runs: Record<string, Run> = {};
      for (const arm of order) runs[arm.label] = await measured(arm, c);
      pairs.push({ before: runs["before"]!, after: runs["after"]! });
      const line = (r: Run) => `${r.requestsPerSecond}/s p99 ${r.latencyP99Ms} ms cpu ${r.cpuMsPerKRequests["total"]} ms/1k`;
      console.log(`${name} round ${i + 1}: before ${line(runs["before"]!)}, after ${line(runs["after"]!)} (load ${runs["after"]!.loadAverage1m})`);
    }
    const summary = (pick: (p: { before: Run; after: Run }) => Run) => ({
      requestsPerSecond: median(pairs.map((p) => pick(p).requestsPerSecond)),
      latencyP50Ms: median(pairs.map((p) => pick(p).latencyP50Ms)),
      latencyP99Ms: median(pairs.map((p) => pick(p).latencyP99Ms)),
      cpuMsPerKRequests: median(pairs.map((p) => pick(p).cpuMsPerKRequests["total"] ?? Number.NaN)),
    });
    // Ratios per pair (same moment, same load), then their median.
    const throughputRatio = round4(median(pairs.map((p) => p.after.requestsPerSecond / p.before.requestsPerSecond)));
    cases[name] = {
      path: c.path,
      before: summary((p) => p.before),
      after: summary((p) => p.after),
      throughputRatio,
      p99Ratio: round4(median(pairs.map((p) => p.after.latencyP99Ms / p.before.latencyP99Ms))),
      cpuRatio: round4(median(pairs.map((p) => (p.after.cpuMsPerKRequests["total"] ?? 0) / (p.before.cpuMsPerKRequests["total"] ?? 1)))),
      meetsTarget: Math.abs(1 - throughputRatio) <= TARGET.maxThroughputDifference || throughputRatio > 1,
      non2xx: pairs.reduce((n, p) => n + p.before.non2xx + p.after.non2xx, 0),
      runs: pairs,
    };
  }
  const revision = (await promisify(execFile)("git", ["rev-parse", "--short", "HEAD"], { cwd: HERE }).catch(() => ({ stdout: "" }))).stdout.trim();
  const results = {
    date: new Date().toISOString(),
    smoke: SMOKE,
    machine: "2 cores shared by wrk, both Corrals (each: nats-server, redis-server, every service, a provisioner) and other work",
    before: BEFORE_LABEL,
    after: revision,
    connections: CONNECTIONS,
    durationSeconds: DURATION_S,
    rounds: ROUNDS,
    target: TARGET,
    /** Microseconds of validation per request, timed in this process (the services run the same validators). */
    perRequestValidationMicros: perRequestValidation,
    cases,
    loadAverageAtEnd: loadavg().map(round2),
  };
  mkdirSync(new URL("../results/", import.meta.url), { recursive: true });
  writeFileSync(new URL(`../results/${OUT}`, import.meta.url), JSON.stringify(results, null, 2) + "\n");
  console.log(JSON.stringify({ ...results, cases: Object.fromEntries(Object.entries(cases).map(([k, v]) => [k, { ...(v as object), runs: undefined }])) }, null, 2));
} finally {
  await Promise.all(arms.map(stopArm));
  rmSync(scratch, { recursive: true, force: true });
}
