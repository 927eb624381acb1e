/**
 * One chaos run on a {@link ChaosSystem}: a tenant with the test catalog on `sim` and the `recorder` automator,
 * clusters of mixed templates through the workload while the fault injector (unless off) kills and pauses, REST
 * probed every 100 ms; then the checker's verdict. The test and the benchmark both run this.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { SUPERADMIN, type Caller } from "../api.js";
import { simFixtureCatalog, waitForAssignment } from "../clusters.js";
import { startAvailabilityProbe, type AvailabilityReport } from "./availability.js";
import type { ChaosSystem } from "./chaos-system.js";
import { checkChaos, type Verdict } from "./checker.js";
import { countFaults, startFaultInjector, type Fault, type FaultKind, type FaultOptions } from "./faults.js";
import { call, gatewayRotation } from "./rest.js";
import { readSideEffects } from "./side-effects.js";
import { expectedStatus, runWorkload, type ClusterSpec, type WorkloadReport } from "./workload.js";

/** Mixed templates of the test catalog, each with a service it can add. */
const TEMPLATES: ReadonlyArray<Omit<ClusterSpec, "name">> = [
  { template: "webapp", numMachines: 2, addService: "redis" },
  { template: "k8s-single", numMachines: 1, addService: "node-exporter" },
  { template: "k8s-distributed", numMachines: 3, addService: "prometheus" },
];

export interface ChaosRunOptions {
  /** Tenant created for this run. */
  tenant: string;
  clusters: number;
  concurrency: number;
  /** No operation starts after this long, ms. */
  durationMs: number;
  /** Fault injection; `false`: a run without faults. */
  faults: FaultOptions | false;
  /** Admin fields of the `sim` providers (`delay_ms`, ...). @default {} */
  sim?: Record<string, string>;
  /** How long one operation may take to settle. */
  settleTimeoutMs?: number;
  /** Worker loops of the tenant. */
  workers: number;
}

export interface ChaosRunReport {
  workload: WorkloadReport;
  faults: Fault[];
  faultsByKind: Record<FaultKind, number>;
  availability: AvailabilityReport;
  verdict: Verdict;
  /** Operations completed per minute of the workload. */
  operationsPerMinute: number;
}

export async function runChaos(sys: ChaosSystem, options: ChaosRunOptions): Promise<ChaosRunReport> {
  const admin: Caller = { user: "admin", tenant: options.tenant };
  await setUpTenant(sys, options, admin);
  const clusters: ClusterSpec[] = Array.from({ length: options.clusters }, (_, i) => ({
    ...(TEMPLATES[i % TEMPLATES.length] as Omit<ClusterSpec, "name">),
    name: `chaos-${i}`,
  }));
  const probe = startAvailabilityProbe(sys.baseUrls, admin, "/clusters?status=active");
  const injector = options.faults === false ? undefined : startFaultInjector(sys, options.faults);
  const workload = await runWorkload({
    baseUrls: sys.baseUrls,
    caller: admin,
    clusters,
    concurrency: options.concurrency,
    deadline: Date.now() + options.durationMs,
    ...(options.settleTimeoutMs !== undefined ? { settleTimeoutMs: options.settleTimeoutMs } : {}),
  });
  const faults = (await injector?.stop()) ?? [];
  const availability = await probe.stop();
  const expectations = workload.runs.flatMap((r) => {
    const status = expectedStatus(r);
    return r.id !== undefined && status !== undefined ? [{ id: r.id, status: status as "active" | "terminated" }] : [];
  });
  // Give clusters whose last operation timed out a last chance to finish now that nothing is killed any more.
  await waitUntilSettled(sys, admin, workload, 60_000);
  const verdict = await checkChaos(sys.nc, options.tenant, expectations, readSideEffects(sys.recordFile));
  return {
    workload,
    faults,
    faultsByKind: countFaults(faults),
    availability,
    verdict,
    operationsPerMinute: Math.round((workload.operationsCompleted * 60_000) / workload.elapsedMs),
  };
}

/** The tenant with its workers placed and the test catalog imported (retried until the plugin types are known). */
async function setUpTenant(sys: ChaosSystem, options: ChaosRunOptions, admin: Caller): Promise<void> {
  const next = gatewayRotation(sys.baseUrls);
  const created = await call(next(), SUPERADMIN, "POST", "/tenants", { tenant: { name: options.tenant, workers: options.workers } });
  if (!created.answered || created.status !== 200) throw new Error(`creating tenant ${options.tenant}: ${JSON.stringify(created)}`);
  await waitForAssignment(sys.nc, options.tenant, 30_000);
  const catalog = recorderCatalog(options.sim ?? {});
  for (let i = 0; ; i++) {
    const r = await call(next(), admin, "POST", "/import", catalog);
    if (r.answered && r.status === 200) return;
    if (i >= 40) throw new Error(`importing the catalog: ${JSON.stringify(r)}`);
    await sleep(500);
  }
}

/** The test catalog on `sim`, every service action run by the `recorder` automator. */
function recorderCatalog(sim: Record<string, string>): Record<string, any[]> {
  const catalog = simFixtureCatalog({ providerFields: sim });
  for (const service of catalog["services"] ?? []) {
    for (const action of Object.values<any>(service.provisioner?.actions ?? {})) action.type = "recorder";
  }
  return catalog;
}

/** Waits until no cluster of the workload is pending (or `timeoutMs`). */
async function waitUntilSettled(sys: ChaosSystem, caller: Caller, workload: WorkloadReport, timeoutMs: number): Promise<void> {
  const ids = new Set(workload.runs.flatMap((r) => (r.id ? [r.id] : [])));
  const next = gatewayRotation(sys.baseUrls);
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const r = await call<Array<{ id: string; status: string }>>(next(), caller, "GET", "/clusters");
    if (r.answered && Array.isArray(r.body) && !r.body.some((c) => ids.has(c.id) && c.status === "pending")) return;
    await sleep(1_000);
  }
}
