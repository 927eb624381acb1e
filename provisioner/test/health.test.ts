import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  buckets,
  decode,
  encode,
  healthCheckSubject,
  healthReportSubject,
  kvKey,
  type HealthCheckReply,
  type JsonObject,
  type NodeHealthCheck,
  type NodeHealthReport,
  type TaskMessage,
} from "@corral/contracts";
import { ensureStreams, openBucket, putValue, silentLogger } from "@corral/shared";
import { createSimProvider, startProvisioner, type RunningProvisioner } from "@corral/provisioner";
import { checkedTenants } from "../src/health/checked-tenants.js";
import { testWithNats } from "../../test/helpers/nats-test.js";
import { assignTenant, eventually, publishTask, taskMessage, uniqueName, waitResult } from "./helpers.js";

const INTERVAL_MS = 400;
const FULL_REPORT_MS = 2_500;

let dir: string;
const started: RunningProvisioner[] = [];
/** What the sim provider's health check finds, by node id (healthy when absent). */
const findings = new Map<string, NodeHealthCheck>();

const test = testWithNats("provisioner-health-test", async (nc) => {
  await ensureStreams(nc);
  dir = await mkdtemp(join(tmpdir(), "corral-health-"));
});

test.after.always(async () => {
  await Promise.all(started.map((p) => p.stop()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A provisioner carrying a sim provider whose findings the test sets, checking every INTERVAL_MS. */
async function start(nc: NatsConnection, id: string): Promise<RunningProvisioner> {
  const p = await startProvisioner({
    nc,
    log: silentLogger,
    id,
    capacity: 4,
    workDir: join(dir, id),
    pullExpiresMs: 1000,
    plugins: [createSimProvider({ health: (node) => findings.get(node.nodeId) ?? { state: "healthy", message: "sim: up" } })],
    healthIntervalMs: INTERVAL_MS,
    healthFullReportMs: FULL_REPORT_MS,
  });
  started.push(p);
  return p;
}

/** Every report published for the tenant from now on, with the time it arrived. */
function collectReports(nc: NatsConnection, tenant: string) {
  const reports: Array<{ at: number; report: NodeHealthReport }> = [];
  const sub = nc.subscribe(healthReportSubject(tenant), {
    callback: (_err, msg) => {
      reports.push({ at: Date.now(), report: decode(msg.data) });
    },
  });
  return { reports, stop: () => sub.unsubscribe() };
}

/** Runs a node's CREATE and CONFIRM through the tenant's queue (provider field `health_check` as given). */
async function provision(nc: NatsConnection, tenant: string, clusterId: string, nodenum: number, healthCheck: boolean): Promise<TaskMessage> {
  const nodeId = `${clusterId}-${nodenum}`;
  const fields: JsonObject = healthCheck ? { health_check: "true" } : {};
  const provider = { name: "sim-checked", providertype: "sim", provisioner: fields };
  let results = {};
  let last: TaskMessage | undefined;
  for (const taskName of ["CREATE", "CONFIRM"] as const) {
    const task = taskMessage({ tenant, clusterId, nodeId, taskName, config: { nodenum, hostname: `n${nodenum}.local`, provider, results } });
    await publishTask(nc, task);
    const result = await waitResult(nc, task);
    results = { ...results, ...result.result };
    last = task;
  }
  return last!;
}

test("health - the tenant's checker reports every node, then a change within the interval; full reports; on demand; deleted nodes drop out", async (t) => {
  const { nc } = t.context;
  const tenant = uniqueName("t-health");
  const clusterId = uniqueName("c");
  await putValue(await openBucket(nc, buckets.clusters), kvKey(clusterId), { tenant, status: "active" });
  // Two provisioners run the tenant's workers: only the one with the lower id checks it.
  const checker = await start(nc, `a-${uniqueName("prov")}`);
  const other = await start(nc, `z-${uniqueName("prov")}`);
  await assignTenant(nc, checker.id, tenant, 2);
  await assignTenant(nc, other.id, tenant, 2);
  const { reports, stop } = collectReports(nc, tenant);

  await provision(nc, tenant, clusterId, 1000, true);
  await provision(nc, tenant, clusterId, 1001, true);
  const unchecked = await provision(nc, tenant, clusterId, 1002, false);
  const first = `${clusterId}-1000`;
  const second = `${clusterId}-1001`;

  const reportedOf = (nodeId: string) => reports.flatMap((r) => r.report.nodes.filter((n) => n.nodeId === nodeId).map((n) => ({ ...n, at: r.at, full: r.report.full })));
  await eventually(() => reportedOf(first).length > 0 && reportedOf(second).length > 0, { what: "both checked nodes reported", timeoutMs: 10_000 });
  t.like(reportedOf(first)[0], { clusterId, state: "healthy", message: "sim: up" });
  t.true(reports.every((r) => r.report.provisionerId === checker.id && r.report.tenant === tenant), "one checker per tenant: the lower id");
  t.is(reportedOf(unchecked.nodeId).length, 0, "a sim node without health_check is never checked");

  // The machine vanishes: a change report within one interval (plus a round's own time).
  const vanished = Date.now();
  findings.set(first, { state: "missing", message: "sim: gone" });
  const change = await eventually(() => reportedOf(first).find((n) => n.state === "missing" && !n.full) ?? false, {
    what: "the change reported",
    timeoutMs: 10_000,
  });
  t.true(change.at - vanished <= INTERVAL_MS + 1_500, `reported ${change.at - vanished} ms after the machine vanished`);
  t.is(change.message, "sim: gone");
  const changesOfSecond = () => reportedOf(second).filter((n) => !n.full).length;
  t.is(changesOfSecond(), 1, "an unchanged node is reported once, then only in full reports");

  // Full reports list every checked node, changed or not.
  const full = await eventually(() => reports.find((r) => r.report.full && r.at > vanished)?.report ?? false, {
    what: "a full report",
    timeoutMs: FULL_REPORT_MS + 5_000,
  });
  t.deepEqual(full.nodes.map((n) => `${n.nodeId}:${n.state}`).sort(), [`${first}:missing`, `${second}:healthy`]);

  // On demand: the checker answers what it finds now.
  findings.set(second, { state: "unreachable", message: "sim: no answer" });
  const reply = decode<HealthCheckReply>((await nc.request(healthCheckSubject(tenant), encode({ nodeIds: [second] }), { timeout: 5_000 })).data);
  t.is(reply.provisionerId, checker.id);
  t.deepEqual(reply.nodes.map((n) => [n.nodeId, n.state, n.message]), [[second, "unreachable", "sim: no answer"]]);

  // DELETE removes the node's target: it is no longer checked.
  const del = taskMessage({ tenant, clusterId, nodeId: first, taskName: "DELETE", config: { nodenum: 1000, provider: { name: "sim-checked", providertype: "sim", provisioner: { health_check: "true" } } } });
  await publishTask(nc, del);
  await waitResult(nc, del);
  const deleted = Date.now();
  const later = await eventually(() => reports.find((r) => r.report.full && r.at > deleted + INTERVAL_MS)?.report ?? false, {
    what: "a full report after the DELETE",
    timeoutMs: FULL_REPORT_MS + 5_000,
  });
  t.deepEqual(later.nodes.map((n) => n.nodeId), [second]);
  stop();
});

test("health - a terminated cluster's targets are dropped and its nodes no longer checked", async (t) => {
  const { nc } = t.context;
  const tenant = uniqueName("t-term");
  const clusterId = uniqueName("c");
  const clusters = await openBucket(nc, buckets.clusters);
  await putValue(clusters, kvKey(clusterId), { tenant, status: "active" });
  const p = await start(nc, `b-${uniqueName("prov")}`);
  await assignTenant(nc, p.id, tenant, 1);
  const node = await provision(nc, tenant, clusterId, 1000, true);
  const targets = await openBucket(nc, buckets.healthTargets);
  const key = kvKey(tenant, clusterId, node.nodeId);
  t.is((await targets.get(key))?.operation, "PUT", "CONFIRM wrote the node's target");

  await putValue(clusters, kvKey(clusterId), { tenant, status: "terminated" });
  await eventually(async () => (await targets.get(key))?.operation !== "PUT", { what: "the target removed", timeoutMs: 10_000 });
  t.pass();
});

test("health - one checker per tenant: the lowest id among the provisioners running its workers", (t) => {
  const assignment = { b: { t1: 1, t2: 2 }, a: { t1: 1, t3: 0 }, c: { t3: 1 } };
  t.deepEqual([...checkedTenants(assignment, "a")], ["t1"]);
  t.deepEqual([...checkedTenants(assignment, "b")].sort(), ["t2"]);
  t.deepEqual([...checkedTenants(assignment, "c")], ["t3"], "a provisioner with 0 workers of a tenant does not count");
});
