import anyTest, { type TestFn } from "ava";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callEndpoint, createLogger, type Logger } from "@corral/shared";
import { api } from "../helpers/api.js";
import { createCluster as createClusterAs, waitForStatus as waitForStatusAs } from "../helpers/clusters.js";
import { createCluster, createClusterCatalog, waitForStatus, type ClusterCatalog } from "../helpers/cluster-fixture.js";
import { eventually } from "../helpers/eventually.js";
import { scrape, samplesOf, valueOf, type Exposition } from "../helpers/prometheus-text.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { bearer, tokenFor } from "../helpers/tokens.js";

/**
 * Issue 12, metrics for Prometheus: every service instance and the provisioner of a real system (each with its own
 * registry and /metrics port, as processes of their own have) is scraped after a sim cluster was created, and the
 * text is parsed; the request id a client gets back appears in the gateway's and the serving service's log lines.
 */
interface LogLine {
  instance: string;
  record: Record<string, unknown>;
}

const test = anyTest as TestFn<{ sys: TestSystem; lines: LogLine[]; catalog: ClusterCatalog; clusterId: string }>;

/** Loggers that keep every line, with the instance that wrote it. */
function capturing(lines: LogLine[]): (instance: string) => Logger {
  return (instance) => createLogger({ instance }, { write: (line) => lines.push({ instance, record: JSON.parse(line) as Record<string, unknown> }) });
}

test.before(async (t) => {
  const lines: LogLine[] = [];
  t.context.lines = lines;
  t.context.sys = await startSystem({ clusters: 1, provisioners: 1, metrics: 1, prometheus: true, reconcileIntervalMs: 500, logger: capturing(lines) });
  const { sys } = t.context;
  t.context.catalog = await createClusterCatalog(sys.baseUrl, { workers: 2, services: [{ name: "base", actions: { install: "true" } }] });
  t.context.clusterId = await createCluster(sys.baseUrl, t.context.catalog, 2);
  await waitForStatus(sys.baseUrl, t.context.catalog, t.context.clusterId, "active", 60_000);
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
});

const scrapeAll = async (sys: TestSystem): Promise<Record<string, Exposition>> =>
  Object.fromEntries(await Promise.all(Object.entries(sys.metricsUrls).map(async ([name, url]) => [name, await scrape(url)] as const)));

test.serial("prometheus - every service instance and the provisioner serve /metrics with the named series", async (t) => {
  const { sys, catalog, clusterId } = t.context;
  t.is((await api(sys.baseUrl, "GET", `/clusters/${clusterId}`, catalog.admin)).status, 200);
  t.is((await api(sys.baseUrl, "GET", `/clusters/${clusterId}/nonsense/${clusterId}`, catalog.admin)).status, 404);
  const dryRun = { name: "dry", clusterTemplate: catalog.template, numMachines: 1 };
  t.is((await api(sys.baseUrl, "POST", "/clusters?dryRun=true", { ...catalog.admin, body: dryRun })).status, 200);
  const all = await scrapeAll(sys);
  t.deepEqual(Object.keys(all).sort(), ["clusters-0", "gateway-0", "metrics-0", "plugins-0", "provisioner-0", "solver-0", "tenancy-0"]);
  for (const [name, scraped] of Object.entries(all)) {
    t.true(valueOf(scraped, "process_cpu_user_seconds_total") > 0, `${name}: default process metrics`);
  }

  const gateway = all["gateway-0"]!;
  const http = "corral_http_request_duration_seconds_count";
  t.is(gateway.types.get("corral_http_request_duration_seconds"), "histogram");

  t.is(valueOf(gateway, http, { method: "GET", route: "/clusters/:id", status: "200" }), 1, "the read just made");
  t.is(valueOf(gateway, http, { method: "POST", route: "/providers", status: "200" }), 1);
  t.is(valueOf(gateway, http, { route: "unmatched", status: "404" }), 1, "a path of no route");
  t.true(valueOf(gateway, http, { method: "GET", route: "/clusters/:id/status", status: "200" }) >= 1, "the wait polled the status");
  const routeLabels = new Set(samplesOf(gateway, http).map((s) => s.labels["route"] ?? ""));
  t.false([...routeLabels].some((r) => r.includes(clusterId) || r.includes(catalog.tenant)), "route templates only, never a raw path");
  const buckets = samplesOf(gateway, "corral_http_request_duration_seconds_bucket", { route: "/clusters", status: "200" });
  t.is(buckets.at(-1)?.labels["le"], "+Inf");
  t.is(buckets.at(-1)?.value, 2);

  const rpc = "corral_rpc_request_duration_seconds_count";
  t.is(valueOf(all["tenancy-0"]!, rpc, { endpoint: "tenancy.tenants.create", status: "200" }), 1);
  t.is(valueOf(all["clusters-0"]!, rpc, { endpoint: "clusters.create", status: "200" }), 2, "the create and the dry run");
  t.is(valueOf(all["clusters-0"]!, rpc, { endpoint: "clusters.get", status: "200" }), 1);
  t.true(valueOf(all["solver-0"]!, rpc) > 0, "the solver answered the dry run");
  t.is(valueOf(gateway, http, { method: "POST", route: "/clusters", status: "200" }), 2, "the create and the dry run");
  t.true(valueOf(all["plugins-0"]!, rpc) > 0, "the plugins service answered the provisioner's plugin types");

  const clusters = all["clusters-0"]!;
  t.is(clusters.types.get("corral_clusters"), "gauge");
  t.is(valueOf(clusters, "corral_clusters", { status: "active" }), 1);
  t.is(valueOf(clusters, "corral_clusters", { status: "pending" }), 0, "every status is listed");
  t.is(valueOf(clusters, "corral_plans_started_total", { action: "CLUSTER_CREATE" }), 1);
  t.is(valueOf(clusters, "corral_plans_finished_total", { action: "CLUSTER_CREATE", outcome: "succeeded" }), 1);
  for (const task of ["CREATE", "CONFIRM", "BOOTSTRAP"]) {
    t.is(valueOf(clusters, "corral_tasks_dispatched_total", { task }), 2, `${task} dispatched once per node`);
    t.is(valueOf(clusters, "corral_task_duration_seconds_count", { task, outcome: "completed" }), 2, `${task} completed per node`);
  }
  t.is(valueOf(clusters, "corral_tasks_retried_total"), 0);
  t.true(valueOf(clusters, "corral_task_duration_seconds_sum", { task: "CREATE" }) >= 0);

  const queues = all["metrics-0"]!;
  t.is(queues.types.get("corral_task_queue_depth"), "gauge");
  t.deepEqual(
    samplesOf(queues, "corral_task_queue_depth", { tenant: catalog.tenant }).map((s) => [s.labels["state"], s.value]).sort(),
    [
      ["in_progress", 0],
      ["queued", 0],
    ],
    "the tenant's queue is empty once its cluster is active",
  );
  t.is(samplesOf(queues, "corral_task_queue_depth", { tenant: "superadmin" }).length, 2);

  const provisioner = all["provisioner-0"]!;
  t.is(valueOf(provisioner, "corral_provisioner_capacity"), 20);
  t.is(valueOf(provisioner, "corral_provisioner_worker_loops", { state: "busy" }), 0);
  t.is(valueOf(provisioner, "corral_provisioner_worker_loops", { state: "idle" }), 2, "the tenant's two workers wait for tasks");
});

test.serial("prometheus - a request id is answered in X-Request-ID and logged by the gateway and the serving service", async (t) => {
  const { sys, catalog, lines } = t.context;
  const given = "trace-4f2a.e2e";
  const res = await api(sys.baseUrl, "GET", "/providers", { ...catalog.admin, headers: { "x-request-id": given } });
  t.is(res.status, 200);
  t.is(res.headers.get("x-request-id"), given, "a valid id of the client is kept");
  const linesOf = (id: string) => lines.filter((l) => l.record["requestId"] === id);
  await eventually(async () => linesOf(given).length >= 2, { what: "the request's log lines", timeoutMs: 5000, intervalMs: 20 });
  const gatewayLine = linesOf(given).find((l) => l.instance === "gateway-0")?.record;
  t.like(gatewayLine, { level: "info", msg: "request", method: "GET", route: "/providers", path: "/v2/providers", status: 200 });
  t.is(typeof gatewayLine?.["ms"], "number");
  const servedLine = linesOf(given).find((l) => l.instance === "tenancy-0")?.record;
  t.like(servedLine, { level: "info", msg: "served", status: 200 });
  t.regex(String(servedLine?.["endpoint"]), /^tenancy\.catalog\.providers\./);
  t.is(linesOf(given).length, 2, "one line each");

  const made = await api(sys.baseUrl, "GET", `/clusters/${t.context.clusterId}`, { ...catalog.admin, headers: { "x-request-id": "has spaces in it" } });
  const id = made.headers.get("x-request-id") ?? "";
  t.regex(id, /^[0-9a-f-]{36}$/, "an unusable id is replaced by a new one");
  await eventually(async () => linesOf(id).length >= 2, { what: "the new id's log lines", timeoutMs: 5000, intervalMs: 20 });
  t.deepEqual(linesOf(id).map((l) => l.instance).sort(), ["clusters-0", "gateway-0"]);

  const missing = await api(sys.baseUrl, "GET", "/clusters/c-none", catalog.admin);
  t.is(missing.status, 404);
  const missingId = missing.headers.get("x-request-id") ?? "";
  await eventually(async () => linesOf(missingId).length >= 2, { what: "the 404's log lines", timeoutMs: 5000, intervalMs: 20 });
  t.like(linesOf(missingId).find((l) => l.instance === "gateway-0")?.record, { route: "/clusters/:id", status: 404 });
  t.like(linesOf(missingId).find((l) => l.instance === "clusters-0")?.record, { endpoint: "clusters.get", status: 404 });
});

test.serial("prometheus - a task that keeps failing is counted as retried and failed, its plan as failed, its cluster as incomplete", async (t) => {
  const { sys } = t.context;
  const broken = await createClusterCatalog(sys.baseUrl, { workers: 1, services: [{ name: "broken", actions: { install: "exit 3" } }] });
  const id = await createClusterAs(sys.baseUrl, broken.admin, { name: "broken", clusterTemplate: broken.template, numMachines: 1 });
  await waitForStatusAs(sys.baseUrl, broken.admin, id, "incomplete", 60_000);
  const clusters = await scrape(sys.metricsUrls["clusters-0"]!);
  t.is(valueOf(clusters, "corral_clusters", { status: "incomplete" }), 1);
  t.is(valueOf(clusters, "corral_clusters", { status: "active" }), 1, "the first test's cluster");
  t.is(valueOf(clusters, "corral_plans_started_total", { action: "CLUSTER_CREATE" }), 2);
  t.is(valueOf(clusters, "corral_plans_finished_total", { action: "CLUSTER_CREATE", outcome: "failed" }), 1);
  const failedInstalls = valueOf(clusters, "corral_task_duration_seconds_count", { task: "INSTALL", outcome: "failed" });
  t.is(failedInstalls, 3, "every attempt failed");
  t.is(valueOf(clusters, "corral_tasks_retried_total", { task: "INSTALL" }), 2, "attempts after the first");
  t.is(valueOf(clusters, "corral_tasks_dispatched_total", { task: "INSTALL" }), 2 + 3, "the first cluster's two nodes, then three attempts");
});

test.serial("prometheus - with security, the auth service counts its requests; a refused token is labelled by its route", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "corral-prometheus-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const realmfile = join(dir, "realm.properties");
  await writeFile(realmfile, "root: rootpw,superadmin\n");
  const sys = await startSystem({ prometheus: true, security: { config: { "security.authentication.basic.realmfile": realmfile } } });
  t.teardown(() => sys.stop());
  const token = await tokenFor(sys.tokenUrl!, "root", "rootpw");
  t.like(await callEndpoint(sys.nc, "auth.verify", { token }), { userId: "root" });
  const root = { user: "root", tenant: "superadmin" };
  t.is((await api(sys.baseUrl, "GET", "/tenants", { ...root, headers: bearer(token) })).status, 200);
  t.is((await api(sys.baseUrl, "GET", "/tenants", { ...root, headers: bearer("not-a-token") })).status, 401);

  const auth = await scrape(sys.metricsUrls["auth"]!);
  t.is(valueOf(auth, "corral_rpc_request_duration_seconds_count", { endpoint: "auth.verify", status: "200" }), 1);
  const gateway = await scrape(sys.metricsUrls["gateway-0"]!);
  const http = "corral_http_request_duration_seconds_count";
  t.is(valueOf(gateway, http, { method: "GET", route: "/tenants", status: "200" }), 1);
  t.is(valueOf(gateway, http, { method: "GET", route: "/tenants", status: "401" }), 1, "refused before routing, still counted on its route");
});
