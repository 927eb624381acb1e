/**
 * End to end through REST: operations on running clusters. Stop/start/restart of one service and of all services
 * in dependency order, an action with nothing to do, lease extension and automatic deletion of expired clusters,
 * the status filter of the cluster list and `POST /getNodeProperties`.
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import { api, type Caller } from "../helpers/api.js";
import { assertError, assertOk } from "../helpers/assertions.js";
import {
  createActiveCluster,
  createCluster,
  dependencyClosure,
  fixtureDependencies,
  planOrderViolations,
  stageIndex,
  taskKey,
  waitForStatus,
  type E2eTenant,
  latestPlan,
  type PlanBody,
  type StatusBody,
  getOk,
  tenantWithSimCatalog,
} from "../helpers/clusters.js";
import { eventually } from "../helpers/eventually.js";
import { fixtureTemplate } from "../helpers/fixture-catalog.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

interface Context {
  sys: TestSystem;
}
const test = anyTest as TestFn<Context>;
type T = ExecutionContext<Context>;

const HOUR = 3_600_000;

/** webapp with lease rules: 1 h initially, at most 3 h after creation, 1 h per extension. */
const leasedWebapp = () => ({
  ...fixtureTemplate("webapp"),
  name: "webapp-leased",
  administration: { leaseduration: { initial: "1h", max: "3h", step: "1h" } },
});
/** webapp whose clusters live 1.5 s. */
const shortWebapp = () => ({
  ...fixtureTemplate("webapp"),
  name: "webapp-short",
  administration: { leaseduration: { initial: 1500, max: 0, step: 0 } },
});

test.before(async (t) => {
  t.context.sys = await startSystem({ clusters: 1, provisioners: 1, reconcileIntervalMs: 250 });
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
});

const deps = fixtureDependencies();

const tenantWithCatalog = (t: T, prefix: string): Promise<E2eTenant> =>
  tenantWithSimCatalog(t.context.sys, prefix, { catalog: { extraTemplates: [leasedWebapp(), shortWebapp()] } });

const get = <B = any>(t: T, caller: Caller, path: string): Promise<B> => getOk<B>(t.context.sys.baseUrl, caller, path);

const latestPlanOf = (t: T, caller: Caller, id: string) => latestPlan(t.context.sys.baseUrl, caller, id);

/** POSTs a services operation, waits for active, answers the status and the operation's plan. */
async function servicesOp(t: T, caller: Caller, id: string, path: string): Promise<{ status: StatusBody; plan: PlanBody }> {
  const res = await api(t.context.sys.baseUrl, "POST", `/clusters/${id}/services${path}`, caller);
  assertOk(t, res, `POST services${path}`);
  const status = await waitForStatus(t.context.sys.baseUrl, caller, id, "active");
  return { status, plan: await latestPlanOf(t, caller, id) };
}

const tasksOf = (plan: PlanBody, taskName: string) =>
  [...new Set(plan.stages.flat().filter((x) => x.taskName === taskName).map((x) => x.service ?? ""))].sort();

test("k8s-distributed: stop, start and restart of one service and of all services follow the dependencies", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "svcops");
  const id = await createActiveCluster(baseUrl, tenant.user, { name: "ops1", clusterTemplate: "k8s-distributed", numMachines: 4 });
  const cluster = await get(t, tenant.user, `/clusters/${id}`);
  const services: string[] = cluster.services;
  const withStop = services.filter((s) => s !== "base"); // base defines neither start nor stop
  const master = cluster.nodes.find((n: any) => n.services.includes("kube-apiserver")).id as string;

  // Stop one service: every service that (transitively) depends on it at runtime is stopped first.
  const stopApi = await servicesOp(t, tenant.user, id, "/kube-apiserver/stop");
  t.like(stopApi.status, { action: "stop_services", actionstatus: "complete" });
  t.is(stopApi.plan.action, "STOP_SERVICES");
  const dependents = services.filter((s) => dependencyClosure(deps, "runtime", s, services).has("kube-apiserver"));
  t.true(dependents.includes("kubelet") && dependents.includes("coredns") && dependents.includes("kube-proxy"), "direct and indirect dependents");
  t.false(dependents.includes("etcd") || dependents.includes("containerd"), "its dependencies are not dependents");
  t.deepEqual(tasksOf(stopApi.plan, "STOP"), ["kube-apiserver", ...dependents].sort());
  t.deepEqual(planOrderViolations(stopApi.plan, services, deps), []);
  const apiStop = stageIndex(stopApi.plan).get(taskKey("STOP", "kube-apiserver", master));
  t.is(apiStop, stopApi.plan.stages.length - 1, "kube-apiserver is stopped last");

  // Start one service: everything it depends on at runtime is started first; nothing else.
  const startDns = await servicesOp(t, tenant.user, id, "/coredns/start");
  t.like(startDns.status, { action: "start_services", actionstatus: "complete" });
  t.is(startDns.plan.action, "START_SERVICES");
  t.deepEqual(tasksOf(startDns.plan, "START"), ["coredns", ...dependencyClosure(deps, "runtime", "coredns", services)].sort());
  t.false(tasksOf(startDns.plan, "START").includes("kube-proxy"), "a stopped service coredns does not need stays stopped");
  t.deepEqual(planOrderViolations(startDns.plan, services, deps), []);
  const dnsStage = stageIndex(startDns.plan);
  for (const n of cluster.nodes.filter((x: any) => x.services.includes("coredns"))) {
    t.true((dnsStage.get(taskKey("START", "kube-apiserver", master)) ?? Infinity) < (dnsStage.get(taskKey("START", "coredns", n.id)) ?? -1));
  }

  // Stop all, start all, restart all.
  const stopAll = await servicesOp(t, tenant.user, id, "/stop");
  t.like(stopAll.status, { action: "stop_services", actionstatus: "complete" });
  t.deepEqual(tasksOf(stopAll.plan, "STOP"), [...withStop].sort());
  t.deepEqual(planOrderViolations(stopAll.plan, services, deps), []);
  t.is(stopAll.plan.stages.flat().length, cluster.nodes.flatMap((n: any) => n.services.filter((s: string) => s !== "base")).length);

  const startAll = await servicesOp(t, tenant.user, id, "/start");
  t.like(startAll.status, { action: "start_services", actionstatus: "complete" });
  t.deepEqual(tasksOf(startAll.plan, "START"), [...withStop].sort());
  t.deepEqual(planOrderViolations(startAll.plan, services, deps), []);

  const restartAll = await servicesOp(t, tenant.user, id, "/restart");
  t.like(restartAll.status, { action: "restart_services", actionstatus: "complete" });
  t.is(restartAll.plan.action, "RESTART_SERVICES");
  t.deepEqual(tasksOf(restartAll.plan, "STOP"), [...withStop].sort());
  t.deepEqual(tasksOf(restartAll.plan, "START"), [...withStop].sort());
  t.deepEqual(planOrderViolations(restartAll.plan, services, deps), []);

  // Restart one: it and its dependents are stopped (dependents first) and started again.
  const restartKubelet = await servicesOp(t, tenant.user, id, "/kubelet/restart");
  t.like(restartKubelet.status, { action: "restart_services", actionstatus: "complete" });
  const kubeletDependents = services.filter((s) => dependencyClosure(deps, "runtime", s, services).has("kubelet"));
  t.true(kubeletDependents.includes("kube-proxy") && kubeletDependents.includes("coredns"));
  t.deepEqual(tasksOf(restartKubelet.plan, "STOP"), ["kubelet", ...kubeletDependents].sort());
  t.deepEqual(
    tasksOf(restartKubelet.plan, "START"),
    ["kubelet", ...kubeletDependents].sort(),
    "no dependency of kubelet (containerd, kube-apiserver, etcd) is started: none was stopped",
  );
  t.deepEqual(planOrderViolations(restartKubelet.plan, services, deps), []);

  // The node history records the operations.
  const after = await get(t, tenant.user, `/clusters/${id}`);
  const apiNode = after.nodes.find((n: any) => n.id === master);
  const apiActions = apiNode.actions.filter((a: any) => a.service === "kube-apiserver").map((a: any) => a.action);
  // create; stop kube-apiserver; start coredns (needs it); stop all; start all; restart all (STOP, START); restart
  // kubelet: kube-apiserver, a dependency that was never stopped, is left running.
  t.deepEqual(apiActions, ["INSTALL", "CONFIGURE", "INITIALIZE", "START", "STOP", "START", "STOP", "START", "STOP", "START"]);
  t.is(after.jobs.length, 7);

  // A service that is not on the cluster: a 4xx, no job.
  for (const op of ["stop", "start", "restart"]) {
    const res = await api(baseUrl, "POST", `/clusters/${id}/services/grafana/${op}`, tenant.user);
    assertError(t, res, "4xx", `${op} of a service not on the cluster`);
  }
  t.is((await get(t, tenant.user, `/clusters/${id}`)).jobs.length, 7);
});

test("webapp: an action with nothing to do completes with an empty plan", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "empty");
  // base defines only install and configure: nothing to stop, start or restart.
  const id = await createActiveCluster(baseUrl, tenant.user, { name: "bare", clusterTemplate: "webapp", numMachines: 2, services: ["base"] });
  t.deepEqual(await get(t, tenant.user, `/clusters/${id}/services`), ["base"]);
  for (const [path, action] of [
    ["/stop", "stop_services"],
    ["/start", "start_services"],
    ["/restart", "restart_services"],
    ["/base/stop", "stop_services"],
    ["/base/start", "start_services"],
  ] as const) {
    const { status, plan } = await servicesOp(t, tenant.user, id, path);
    t.deepEqual(status, { clusterid: id, status: "active", action, actionstatus: "complete", stepstotal: 0, stepscompleted: 0 }, path);
    t.deepEqual(plan.stages, [], `${path}: empty plan`);
    t.is(plan.action, action.toUpperCase());
  }
  // The cluster is still usable afterwards.
  const res = await api(baseUrl, "PUT", `/clusters/${id}/config`, { ...tenant.user, body: { config: { a: 1 }, restart: false } });
  assertOk(t, res, "configure after empty plans");
  t.like(await waitForStatus(baseUrl, tenant.user, id, "active"), { action: "cluster_configure", actionstatus: "complete" });
});

test("lease: initial lease from the template, extensions within step and max, bad extensions 400", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "lease");
  const user = tenant.user;

  const tooLong = await api(baseUrl, "POST", "/clusters", {
    ...user,
    body: { name: "l0", clusterTemplate: "webapp-leased", numMachines: 1, initialLeaseDuration: 2 * HOUR },
  });
  assertError(t, tooLong, 400, "initialLeaseDuration above the template's initial");
  t.is(tooLong.body.details?.field, "initialLeaseDuration");

  const shortId = await createActiveCluster(baseUrl, user, { name: "l1", clusterTemplate: "webapp-leased", numMachines: 1, initialLeaseDuration: HOUR / 2 });
  const short = await get(t, user, `/clusters/${shortId}`);
  t.is(short.expireTime - short.createTime, HOUR / 2, "initialLeaseDuration is used");

  const id = await createActiveCluster(baseUrl, user, { name: "l2", clusterTemplate: "webapp-leased", numMachines: 1 });
  const cluster = await get(t, user, `/clusters/${id}`);
  const created = cluster.createTime as number;
  t.is(cluster.expireTime - created, HOUR, "the template's initial lease");

  const extend = (expireTime: unknown) => api(baseUrl, "POST", `/clusters/${id}`, { ...user, body: { expireTime } });
  const expireOf = async () => (await get(t, user, `/clusters/${id}`)).expireTime as number;

  assertOk(t, await extend(created + HOUR + HOUR / 2), "extend by half an hour");
  t.is(await expireOf(), created + HOUR + HOUR / 2);
  t.true((await get<any[]>(t, user, "/clusters")).some((c) => c.id === id && c.expireTime === created + HOUR + HOUR / 2), "the list shows it");

  // More than one step at a time.
  assertError(t, await extend(created + 3 * HOUR), 400, "extension above step");
  assertOk(t, await extend(created + 2 * HOUR + HOUR / 2), "one more step");
  assertOk(t, await extend(created + 3 * HOUR), "up to max");
  // Beyond max after creation.
  assertError(t, await extend(created + 3 * HOUR + 1000), 400, "extension beyond max");
  t.is(await expireOf(), created + 3 * HOUR, "refused extensions change nothing");
  // Shortening into the past, and bad bodies.
  assertError(t, await extend(Date.now() - 1000), 400, "expireTime in the past");
  for (const bad of ["tomorrow", null, true, { at: 1 }, 1.5, -1]) {
    assertError(t, await extend(bad), 400, `expireTime ${JSON.stringify(bad)}`);
  }
  assertError(t, await api(baseUrl, "POST", `/clusters/${id}`, { ...user, body: {} }), 400, "no expireTime");
  assertError(t, await api(baseUrl, "POST", `/clusters/${id}`, { ...user, rawBody: "{expireTime:" }), 400, "broken JSON");
  t.is(await expireOf(), created + 3 * HOUR);
  assertError(t, await api(baseUrl, "POST", `/clusters/99999999`, { ...user, body: { expireTime: created + HOUR } }), 404, "unknown cluster");

  // A cluster whose lease never ends cannot be extended.
  const forever = await createActiveCluster(baseUrl, user, { name: "l3", clusterTemplate: "webapp", numMachines: 1 });
  t.is((await get(t, user, `/clusters/${forever}`)).expireTime, 0);
  assertError(t, await api(baseUrl, "POST", `/clusters/${forever}`, { ...user, body: { expireTime: Date.now() + HOUR } }), 400, "unlimited lease");
});

test("lease: an expired cluster is deleted automatically", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "expiry");
  const id = await createCluster(baseUrl, tenant.user, { name: "short", clusterTemplate: "webapp-short", numMachines: 2 });
  const keep = await createActiveCluster(baseUrl, tenant.user, { name: "keep", clusterTemplate: "webapp", numMachines: 1 });
  const cluster = await get(t, tenant.user, `/clusters/${id}`);
  t.is(cluster.expireTime - cluster.createTime, 1500);
  const status = await eventually(
    async () => {
      const s = await get<StatusBody>(t, tenant.user, `/clusters/${id}/status`);
      return s.status === "terminated" ? s : false;
    },
    { what: "the expired cluster is terminated", timeoutMs: 20_000, intervalMs: 200 },
  );
  t.like(status, { action: "cluster_delete", actionstatus: "complete" });
  const plans = await get<PlanBody[]>(t, tenant.user, `/clusters/${id}/plans`);
  t.deepEqual(plans.map((p) => p.action), ["CLUSTER_DELETE", "CLUSTER_CREATE"]);
  t.is((await get<StatusBody>(t, tenant.user, `/clusters/${keep}/status`)).status, "active", "clusters without a lease stay");
});

test("GET /clusters?status= filters by status; bad statuses are 400", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "filter");
  const user = tenant.user;
  const a = await createActiveCluster(baseUrl, user, { name: "fa", clusterTemplate: "webapp", numMachines: 1 });
  const b = await createActiveCluster(baseUrl, user, { name: "fb", clusterTemplate: "webapp", numMachines: 1 });
  const c = await createActiveCluster(baseUrl, user, { name: "fc", clusterTemplate: "webapp", numMachines: 1 });
  assertOk(t, await api(baseUrl, "DELETE", `/clusters/${b}`, user), "delete fb");
  await waitForStatus(baseUrl, user, b, "terminated");

  const ids = async (query: string) => (await get<any[]>(t, user, `/clusters${query}`)).map((x) => x.id as string);
  t.deepEqual(await ids(""), [c, b, a], "all, newest first");
  t.deepEqual(await ids("?status=active,pending"), [c, a]);
  t.deepEqual(await ids("?status=active"), [c, a]);
  t.deepEqual(await ids("?status=terminated"), [b]);
  t.deepEqual(await ids("?status=pending"), []);
  t.deepEqual(await ids("?status=incomplete,inconsistent"), []);
  t.deepEqual(await ids("?status=terminated,active"), [c, b, a]);

  const summary = (await get<any[]>(t, user, "/clusters?status=active")).find((x) => x.id === a);
  t.deepEqual(Object.keys(summary).sort(), [
    "clusterTemplate",
    "createTime",
    "description",
    "expireTime",
    "id",
    "name",
    "numNodes",
    "ownerId",
    "progress",
    "provider",
    "services",
    "status",
  ]);
  for (const bad of ["bogus", "active,bogus"]) {
    assertError(t, await api(baseUrl, "GET", `/clusters?status=${bad}`, user), 400, `status=${bad}`);
  }
});

test("POST /getNodeProperties with properties and services filters", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "props");
  const user = tenant.user;
  const id = await createActiveCluster(baseUrl, user, { name: "p1", clusterTemplate: "webapp", numMachines: 3 });
  const cluster = await get(t, user, `/clusters/${id}`);
  const rpc = (body: unknown) => api(baseUrl, "POST", "/getNodeProperties", { ...user, body });

  const all = await rpc({ clusterId: id });
  assertOk(t, all, "all properties");
  t.deepEqual(Object.keys(all.body).sort(), cluster.nodes.map((n: any) => n.id).sort());
  for (const node of cluster.nodes) {
    const props = all.body[node.id];
    for (const [k, v] of Object.entries(node.properties)) t.deepEqual(props[k], v, `${node.id}.${k}`);
  }
  t.deepEqual(await rpc({ clusterId: id, properties: [], services: [] }).then((r) => r.body), all.body, "empty filters return everything");

  const some = await rpc({ clusterId: id, properties: ["hostname", "ipaddress"] });
  assertOk(t, some, "hostname and ipaddress");
  for (const node of cluster.nodes) {
    t.deepEqual(some.body[node.id], { hostname: node.properties.hostname, ipaddress: node.properties.ipaddress });
  }

  const databaseNodes = cluster.nodes.filter((n: any) => n.services.includes("postgresql"));
  t.is(databaseNodes.length, 1);
  const database = await rpc({ clusterId: id, services: ["postgresql"], properties: ["hostname"] });
  assertOk(t, database, "postgresql nodes");
  t.deepEqual(database.body, Object.fromEntries(databaseNodes.map((n: any) => [n.id, { hostname: n.properties.hostname }])));

  const both = cluster.nodes.filter((n: any) => n.services.includes("postgresql") && n.services.includes("nginx"));
  t.true(both.length > 0 && both.length < cluster.nodes.length, "some nodes hold both, others not");
  const web = await rpc({ clusterId: id, services: ["postgresql", "nginx"], properties: ["ipaddress"] });
  t.deepEqual(Object.keys(web.body).sort(), both.map((n: any) => n.id).sort(), "nodes holding all listed services");
  t.deepEqual((await rpc({ clusterId: id, services: ["haproxy"] })).body, {}, "no node holds haproxy");
  t.deepEqual((await rpc({ clusterId: id, properties: ["no-such-property"] })).body, Object.fromEntries(cluster.nodes.map((n: any) => [n.id, {}])));

  assertError(t, await rpc({}), 400, "no clusterId");
  assertError(t, await rpc({ clusterId: 17 }), 400, "clusterId not a string");
  assertError(t, await rpc({ clusterId: id, properties: "hostname" }), 400, "properties not an array");
  assertError(t, await rpc({ clusterId: id, services: [1] }), 400, "services not strings");
  assertError(t, await api(baseUrl, "POST", "/getNodeProperties", { ...user, rawBody: "{" }), 400, "broken JSON");
  assertError(t, await rpc({ clusterId: "99999999" }), 404, "unknown cluster");
  assertError(t, await api(baseUrl, "POST", "/getNodeProperties", { ...tenant.other, body: { clusterId: id } }), 404, "another user's cluster");
  assertOk(t, await api(baseUrl, "POST", "/getNodeProperties", { ...tenant.admin, body: { clusterId: id } }), "the tenant admin");
});
