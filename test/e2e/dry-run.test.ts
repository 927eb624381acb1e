/**
 * End to end through REST: `?dryRun=true` on create, configure, add services, start/stop/restart and delete answers
 * the layout and plan the request would produce (solved by the solver service, as the real request is), with the
 * same 4xx as the real request, and writes nothing: every test compares the clusters service's stores before and
 * after, then carries out the real request and compares what it did with what the dry run said.
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { endpoints, type DryRunResult } from "@corral/contracts";
import { apiRoutes, createRouter } from "@corral/gateway/testing";
import { api, type ApiResponse, type Caller } from "../helpers/api.js";
import { assertError, assertOk, show } from "../helpers/assertions.js";
import { createActiveCluster, createCluster, getOk, latestPlan, tenantWithSimCatalog, waitForStatus } from "../helpers/clusters.js";
import { clusterStateSequences, settledClusterStateSequences } from "../helpers/store-writes.js";
import { schemaProblems } from "../helpers/json-schema-check.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

interface Context {
  sys: TestSystem;
}
// Serial: each test checks that nothing at all was written while its dry runs ran.
const test = anyTest.serial as TestFn<Context>;
type T = ExecutionContext<Context>;

test.before(async (t) => {
  t.context.sys = await startSystem({ clusters: 1, provisioners: 1, simSecured: true });
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
});

const withDryRun = (path: string) => `${path}${path.includes("?") ? "&" : "?"}dryRun=true`;

const send = (t: T, caller: Caller, method: string, path: string, body?: unknown): Promise<ApiResponse<any>> =>
  api(t.context.sys.baseUrl, method, path, { ...caller, ...(body !== undefined ? { body } : {}) });

const route = createRouter(apiRoutes());

/** A dry run that must answer 200 with what the `dryRunReply` schema of its endpoint's row says. */
async function dryRun(t: T, caller: Caller, method: string, path: string, body?: unknown): Promise<DryRunResult> {
  const res = await send(t, caller, method, withDryRun(path), body);
  if (res.status !== 200) throw new Error(`dry run of ${method} ${path}: ${show(res)}`);
  const match = route(method, path);
  if (match.kind !== "found") throw new Error(`${method} ${path} matches no route`);
  const schema = endpoints[match.route.endpoint].rest?.dryRunReply;
  t.truthy(schema, `${match.route.endpoint} declares its dry-run answer`);
  if (schema) t.deepEqual(schemaProblems(schema, res.body), [], `${method} ${path}: the answer fits the table's dryRunReply`);
  return res.body as DryRunResult;
}

/**
 * Sends a request as a dry run, then for real: both must be refused with `status` and the same body. Answers the
 * dry run's response.
 */
async function refusedAlike(t: T, caller: Caller, method: string, path: string, body: unknown, status: number, what: string) {
  const dry = await send(t, caller, method, withDryRun(path), body);
  const real = await send(t, caller, method, path, body);
  assertError(t, real, status, what);
  assertError(t, dry, status, `dry run: ${what}`);
  t.deepEqual(dry.body, real.body, `dry run: ${what} is refused with the same answer`);
  return dry;
}

const get = <B = any>(t: T, caller: Caller, path: string): Promise<B> => getOk<B>(t.context.sys.baseUrl, caller, path);

interface ShownTask {
  taskName: string;
  nodeId: string;
  service?: string;
}

/** A plan's stages as `<task>|<service>|<node>` rows, node ids without their cluster id (a dry-run create has none yet). */
const stagesOf = (clusterId: string, stages: ShownTask[][]) =>
  stages.map((stage) => stage.map((task) => `${task.taskName}|${task.service ?? ""}|${task.nodeId.slice(clusterId.length + 1)}`));

/** Nodes as `<node>: <services> on <hardware>/<image>`, node ids without their cluster id, sorted. */
const layoutRows = (clusterId: string, nodes: Array<{ id: string; services: string[]; hardwaretype: string; imagetype: string }>) =>
  nodes.map((n) => `${n.id.slice(clusterId.length + 1)}: ${[...n.services].sort().join(",")} on ${n.hardwaretype}/${n.imagetype}`).sort();

/** The layout of a stored cluster as `GET /clusters/{id}` shows it. */
const clusterLayoutRows = (cluster: any) =>
  layoutRows(
    cluster.id,
    cluster.nodes.map((n: any) => ({ id: n.id, services: n.services, hardwaretype: n.properties.hardwaretype, imagetype: n.properties.imagetype })),
  );

/** Counts the requests sent to the solver service, per endpoint (`layout`, `plan`, ...). */
function watchSolverRequests(nc: NatsConnection): { take(): Promise<Record<string, number>>; stop(): void } {
  let counts: Record<string, number> = {};
  const sub: Subscription = nc.subscribe("corral.solver.>", {
    callback: (_err, msg) => {
      const name = msg.subject.split(".").pop() ?? "";
      counts[name] = (counts[name] ?? 0) + 1;
    },
  });
  return {
    // The server has passed on every request it took before it answers the flush.
    async take() {
      await nc.flush();
      const taken = counts;
      counts = {};
      return taken;
    },
    stop: () => sub.unsubscribe(),
  };
}

test("create: the dry run answers the layout and plan the create then gets, from the solver service, and writes nothing", async (t) => {
  const { sys } = t.context;
  const tenant = await tenantWithSimCatalog(sys, "drycreate");
  const body = { name: "dry1", clusterTemplate: "k8s-distributed", numMachines: 4 };
  const solver = watchSolverRequests(sys.nc);
  t.teardown(() => solver.stop());

  const before = await settledClusterStateSequences(sys.nc);
  const answer = await dryRun(t, tenant.user, "POST", "/clusters", body);
  t.deepEqual(await clusterStateSequences(sys.nc), before, "no record, node, plan, counter, usage, task or event written");
  t.deepEqual(await get(t, tenant.user, "/clusters"), [], "no cluster");
  t.deepEqual(await solver.take(), { layout: 1, plan: 1 }, "the solver service solved the layout and planned");

  t.like(answer, { dryRun: true, clusterId: "new", plan: { action: "CLUSTER_CREATE" } });
  t.is(answer.layout.nodes.length, 4);
  for (const node of answer.layout.nodes) {
    t.regex(node.id, /^new-\d+$/);
    t.regex(node.hostname, /^dry1new-\d+\.k8s\.example\.net$/, "the template's dnsSuffix");
  }
  t.true(answer.plan.stages.length > 0);

  const id = await createActiveCluster(sys.baseUrl, tenant.user, body);
  t.deepEqual(await solver.take(), { layout: 1, plan: 1 }, "a real create asks the solver service too: one solving path");
  const cluster = await get(t, tenant.user, `/clusters/${id}`);
  t.deepEqual(answer.layout.services, cluster.services);
  t.deepEqual(layoutRows("new", answer.layout.nodes), clusterLayoutRows(cluster), "the same nodes with the same services and types");
  const plans = await get<any[]>(t, tenant.user, `/clusters/${id}/plans`);
  const createPlan = plans[plans.length - 1];
  t.is(createPlan.action, answer.plan.action);
  t.deepEqual(stagesOf("new", answer.plan.stages), stagesOf(id, createPlan.stages), "the same tasks in the same stages");
});

test("configure, add services, stop, start, restart and delete: each dry run answers what the request then does, and changes nothing", async (t) => {
  const { sys } = t.context;
  const tenant = await tenantWithSimCatalog(sys, "dryops");
  const id = await createActiveCluster(sys.baseUrl, tenant.user, { name: "ops", clusterTemplate: "webapp", numMachines: 3 });
  const c = `/clusters/${id}`;
  const operations = [
    { method: "PUT", path: `${c}/config`, body: { config: { a: 1 }, restart: true }, action: "CLUSTER_CONFIGURE_WITH_RESTART" },
    { method: "PUT", path: `${c}/config`, body: { config: { a: 2 }, restart: false }, action: "CLUSTER_CONFIGURE" },
    { method: "POST", path: `${c}/services`, body: { services: ["redis"] }, action: "ADD_SERVICES" },
    { method: "POST", path: `${c}/services/nginx/restart`, action: "RESTART_SERVICES" },
    { method: "POST", path: `${c}/services/restart`, action: "RESTART_SERVICES" },
    { method: "POST", path: `${c}/services/postgresql/stop`, action: "STOP_SERVICES" },
    { method: "POST", path: `${c}/services/start`, action: "START_SERVICES" },
    { method: "DELETE", path: c, action: "CLUSTER_DELETE", settles: "terminated" as const },
  ];
  for (const op of operations) {
    const what = `${op.method} ${op.path.slice(c.length) || "/"}`;
    const before = await settledClusterStateSequences(sys.nc);
    const shown = await get(t, tenant.user, c);
    const answer = await dryRun(t, tenant.user, op.method, op.path, op.body);
    t.deepEqual(await clusterStateSequences(sys.nc), before, `${what}: nothing written`);
    t.deepEqual(await get(t, tenant.user, c), shown, `${what}: the cluster is as it was`);
    t.like(answer, { dryRun: true, clusterId: id, plan: { action: op.action } }, what);
    t.true(answer.plan.stages.length > 0, `${what}: tasks planned`);

    assertOk(t, await send(t, tenant.user, op.method, op.path, op.body), what);
    await waitForStatus(sys.baseUrl, tenant.user, id, op.settles ?? "active");
    const after = await get(t, tenant.user, c);
    const plan = await latestPlan(sys.baseUrl, tenant.user, id);
    t.is(plan.action, answer.plan.action, what);
    t.deepEqual(stagesOf(id, answer.plan.stages), stagesOf(id, plan.stages), `${what}: the same tasks in the same stages`);
    t.deepEqual(answer.layout.services, after.services, `${what}: the cluster's services after it`);
    t.deepEqual(layoutRows(id, answer.layout.nodes), clusterLayoutRows(after), `${what}: the nodes after it`);
  }
});

test("bad input: a dry run answers the same 4xx as the real request", async (t) => {
  const { sys } = t.context;
  // A `sim-secured` provider without its password: each request must give it as a provider field.
  const secured = "openstack-lab";
  const tenant = await tenantWithSimCatalog(sys, "drybad", {
    catalog: { providerOverrides: { [secured]: {} }, providerTypes: { [secured]: "sim-secured" } },
  });
  const password = { providerFields: { sim_password: "s3cret" } };
  const id = await createActiveCluster(sys.baseUrl, tenant.user, {
    name: "bad",
    clusterTemplate: "webapp",
    numMachines: 1,
    provider: secured,
    ...password,
  });
  const c = `/clusters/${id}`;
  const ok = { name: "x", clusterTemplate: "webapp", numMachines: 2 };
  const requests: Array<{ what: string; method: string; path: string; body?: unknown }> = [
    { what: "create without a name", method: "POST", path: "/clusters", body: { clusterTemplate: "webapp", numMachines: 1 } },
    { what: "create with an unknown template", method: "POST", path: "/clusters", body: { ...ok, clusterTemplate: "nope" } },
    { what: "create of no machines", method: "POST", path: "/clusters", body: { ...ok, numMachines: 0 } },
    { what: "create below the template's size (solver)", method: "POST", path: "/clusters", body: { ...ok, clusterTemplate: "k8s-distributed" } },
    { what: "create of an incompatible service (solver)", method: "POST", path: "/clusters", body: { ...ok, services: ["base", "kafka-broker"] } },
    { what: "create with an unknown provider", method: "POST", path: "/clusters", body: { ...ok, provider: "nope" } },
    { what: "create with a broken macro", method: "POST", path: "/clusters", body: { ...ok, config: { a: "%host.service.%" } } },
    { what: "create without the provider's fields", method: "POST", path: "/clusters", body: { ...ok, provider: secured } },
    { what: "configure without the provider's fields", method: "PUT", path: `${c}/config`, body: { config: { a: 1 } } },
    { what: "add services without the provider's fields", method: "POST", path: `${c}/services`, body: { services: ["redis"] } },
    { what: "restart without the provider's fields", method: "POST", path: `${c}/services/restart` },
    { what: "delete without the provider's fields", method: "DELETE", path: c },
    { what: "configure without a config", method: "PUT", path: `${c}/config`, body: { restart: true } },
    { what: "configure with a broken macro", method: "PUT", path: `${c}/config`, body: { config: { a: "%join(%" } } },
    { what: "add an unknown service", method: "POST", path: `${c}/services`, body: { services: ["nope"] } },
    { what: "add a service already there", method: "POST", path: `${c}/services`, body: { services: ["base"] } },
    { what: "restart a service not on the cluster", method: "POST", path: `${c}/services/redis/restart` },
    { what: "stop on an unknown cluster", method: "POST", path: "/clusters/99999999/services/stop" },
    { what: "delete an unknown cluster", method: "DELETE", path: "/clusters/99999999" },
  ];
  const before = await settledClusterStateSequences(sys.nc);
  const dry = [];
  for (const r of requests) dry.push(await send(t, tenant.user, r.method, withDryRun(r.path), r.body));
  t.deepEqual(await clusterStateSequences(sys.nc), before, "refused dry runs wrote nothing");
  for (const [i, r] of requests.entries()) {
    const real = await send(t, tenant.user, r.method, r.path, r.body);
    const answer = dry[i]!;
    t.true(real.status >= 400 && real.status < 500, `${r.what}: ${show(real)}`);
    t.is(answer.status, real.status, `dry run: ${r.what}`);
    t.deepEqual(answer.body, real.body, `dry run: ${r.what} is refused with the same answer`);
  }
  const missing = dry[requests.findIndex((r) => r.what === "create without the provider's fields")]?.body;
  t.deepEqual(Object.keys(missing), ["missingFields"], "the {missingFields} body");
  t.like(missing.missingFields[0]?.sim_password, { label: "Simulator password", type: "password" });

  const unparsable = await send(t, tenant.user, "POST", "/clusters?dryRun=maybe", ok);
  assertError(t, unparsable, 400, "dryRun=maybe");
  t.regex(unparsable.body.message, /dryRun/);
  t.deepEqual(await get(t, tenant.user, "/clusters").then((list: any[]) => list.map((x) => x.id)), [id], "nothing created");
});

test("quota: a dry run over the tenant's quota is refused with the 409 the create gets; within it, it reserves nothing", async (t) => {
  const { sys } = t.context;
  const tenant = await tenantWithSimCatalog(sys, "dryquota", { tenant: { maxClusters: 1, maxNodes: 3 } });
  const overNodes = { name: "big", clusterTemplate: "webapp", numMachines: 4 };
  const dryOverNodes = await refusedAlike(t, tenant.user, "POST", "/clusters", overNodes, 409, "4 nodes over maxNodes 3");
  t.is(dryOverNodes.body.error, "quota_exceeded");

  // Within the quota: answered, and nothing is reserved (else the real create below would be over maxClusters).
  const fits = { name: "fits", clusterTemplate: "webapp", numMachines: 3 };
  const before = await settledClusterStateSequences(sys.nc);
  for (let i = 0; i < 3; i++) t.is((await dryRun(t, tenant.user, "POST", "/clusters", fits)).layout.nodes.length, 3);
  t.deepEqual(await clusterStateSequences(sys.nc), before, "usage untouched");
  await createActiveCluster(sys.baseUrl, tenant.user, fits);

  const second = { name: "second", clusterTemplate: "webapp", numMachines: 1 };
  const drySecond = await refusedAlike(t, tenant.user, "POST", "/clusters", second, 409, "a second cluster over maxClusters 1");
  t.regex(drySecond.body.message, /maxClusters/);
});

test("no cluster of another tenant or user: dry runs on it are 404 as the real requests are", async (t) => {
  const { sys } = t.context;
  const owner = await tenantWithSimCatalog(sys, "dryowner");
  const stranger = await tenantWithSimCatalog(sys, "drystranger");
  const id = await createActiveCluster(sys.baseUrl, owner.user, { name: "mine", clusterTemplate: "webapp", numMachines: 1 });
  const c = `/clusters/${id}`;
  const requests = [
    { method: "PUT", path: `${c}/config`, body: { config: { a: 1 } } },
    { method: "POST", path: `${c}/services`, body: { services: ["redis"] } },
    { method: "POST", path: `${c}/services/restart` },
    { method: "POST", path: `${c}/services/base/stop` },
    { method: "DELETE", path: c },
  ];
  const shown = await get(t, owner.user, c);
  const before = await settledClusterStateSequences(sys.nc);
  for (const caller of [stranger.user, stranger.admin, owner.other]) {
    for (const r of requests) {
      const what = `${caller.user}@${caller.tenant}: ${r.method} ${r.path}`;
      const dry = await refusedAlike(t, caller, r.method, r.path, r.body, 404, what);
      t.notRegex(dry.text, /redis|webapp|mine/, `dry run: ${what} shows nothing of the cluster`);
    }
  }
  t.deepEqual(await clusterStateSequences(sys.nc), before, "nothing written");
  t.deepEqual(await get(t, owner.user, c), shown, "the cluster is as it was");
});

test("a busy cluster: a dry run answers the 409 the operation gets", async (t) => {
  const { sys } = t.context;
  const tenant = await tenantWithSimCatalog(sys, "drybusy", { catalog: { providerOverrides: { "aws-us-east-1": { delay_create_ms: "3000" } } } });
  const id = await createCluster(sys.baseUrl, tenant.user, { name: "slow", clusterTemplate: "webapp", numMachines: 1 });
  const path = `/clusters/${id}/services/restart`;
  await refusedAlike(t, tenant.user, "POST", path, undefined, 409, "restart while the create runs");
  await waitForStatus(sys.baseUrl, tenant.user, id, "active");
  t.like(await dryRun(t, tenant.user, "POST", path), { dryRun: true, clusterId: id, plan: { action: "RESTART_SERVICES" } }, "answered once it is active");
});
