/**
 * End to end through REST on `sim`: adding nodes to a live cluster (`POST /clusters/{id}/nodes`, docs/api.md). The
 * dry run answers the grown layout and the plan and changes nothing; the real request lays out the new nodes with
 * the solver service, numbers them after the existing ones, brings them up, and sends CONFIGURE to the existing
 * nodes whose expanded config lists them; refusals answer 400 naming the constraint, 404 and 409.
 */
import { api, type ApiResponse, type Caller } from "../helpers/api.js";
import { assertError, assertOk } from "../helpers/assertions.js";
import { createActiveCluster, getOk, latestPlan, tenantWithSimCatalog, waitForStatus, type E2eTenant } from "../helpers/clusters.js";
import { testWithSystem, type SystemTest } from "../helpers/system-test.js";

const test = testWithSystem({ clusters: 1, provisioners: 1, reconcileIntervalMs: 500 });
type T = SystemTest;

const send = (t: T, caller: Caller, method: string, path: string, body?: unknown): Promise<ApiResponse<any>> =>
  api(t.context.sys.baseUrl, method, path, { ...caller, ...(body !== undefined ? { body } : {}) });
const get = <B = any>(t: T, caller: Caller, path: string): Promise<B> => getOk<B>(t.context.sys.baseUrl, caller, path);

/** Every node lists the hostnames of the nodes with `base` (all of a webapp's): a new node changes every peer's config. */
const PEERS_CONFIG = { peers: "%join(host.service.base,',')%" };
/** Only macros of the node itself (the template's default config lists the node-app hosts: a new node changes it). */
const SELF_CONFIG = { nginx: { server_name: "%host.self%", listen: 80 } };

interface NodeBody {
  id: string;
  services: string[];
  properties: Record<string, unknown>;
  actions: Array<{ taskId: string; service: string; action: string; status: string }>;
}

async function webapp(t: T, tenant: E2eTenant, name: string, config?: object): Promise<string> {
  const body = { name, clusterTemplate: "webapp", numMachines: 3, ...(config ? { config } : {}) };
  return createActiveCluster(t.context.sys.baseUrl, tenant.user, body);
}

test("add nodes: a dry run changes nothing; 3 -> 5 brings up two new nodes and reconfigures the peers", async (t) => {
  const tenant = await tenantWithSimCatalog(t.context.sys, "grow", { workers: 4 });
  const id = await webapp(t, tenant, "grow1", PEERS_CONFIG);
  const before = await get(t, tenant.user, `/clusters/${id}`);
  t.is(before.nodes.length, 3);

  const dry = await send(t, tenant.user, "POST", `/clusters/${id}/nodes?dryRun=true`, { numMachines: "2" });
  assertOk(t, dry, "dry run of adding 2 nodes");
  t.like(dry.body, { dryRun: true, clusterId: id, plan: { action: "ADD_NODES" } });
  const dryIds: string[] = dry.body.layout.nodes.map((n: { id: string }) => n.id);
  t.deepEqual(dryIds, [`${id}-1000`, `${id}-1001`, `${id}-1002`, `${id}-1003`, `${id}-1004`], "the new nodes follow the existing ones");
  t.deepEqual(await get(t, tenant.user, `/clusters/${id}`), before, "a dry run changes nothing");

  const res = await send(t, tenant.user, "POST", `/clusters/${id}/nodes`, { numMachines: "2" });
  assertOk(t, res, "adding 2 nodes");
  t.is(res.body.clusterId, id);
  const planId: string = res.body.planId;
  const pending = await get(t, tenant.user, `/clusters/${id}/status`);
  t.is(pending.action, "add_nodes");
  await waitForStatus(t.context.sys.baseUrl, tenant.user, id, "active");

  const status = await get(t, tenant.user, `/clusters/${id}/status`);
  t.like(status, { status: "active", action: "add_nodes", actionstatus: "complete" });
  const after = await get(t, tenant.user, `/clusters/${id}`);
  const nodes: NodeBody[] = after.nodes;
  t.deepEqual(nodes.map((n) => n.id), dryIds, "the nodes the dry run announced");
  t.deepEqual(
    nodes.map((n) => n.services),
    dry.body.layout.nodes.map((n: { services: string[] }) => n.services),
    "with the services the dry run announced",
  );
  t.is(after.jobs.at(-1), planId);

  const ofPlan = (n: NodeBody) => n.actions.filter((a) => a.taskId.startsWith(`${planId}-`));
  for (const node of nodes.slice(0, 3)) {
    const actions = ofPlan(node);
    t.true(actions.length > 0 && actions.every((a) => a.action === "CONFIGURE" && a.status === "complete"), `${node.id} is only reconfigured`);
    t.deepEqual(new Set(actions.map((a) => a.service)), new Set(node.services), `${node.id}: each of its services is reconfigured`);
  }
  for (const node of nodes.slice(3)) {
    const actions = ofPlan(node).map((a) => a.action);
    for (const action of ["CREATE", "CONFIRM", "BOOTSTRAP", "INSTALL", "CONFIGURE", "INITIALIZE", "START"]) {
      t.true(actions.includes(action), `new node ${node.id} got ${action}`);
    }
  }
  const plan = await latestPlan(t.context.sys.baseUrl, tenant.user, id);
  t.is(plan.id, planId);
  t.is(plan.action, "ADD_NODES");
});

test("add nodes: a config that does not list the nodes leaves the existing nodes alone", async (t) => {
  const tenant = await tenantWithSimCatalog(t.context.sys, "growq", { workers: 4 });
  const id = await webapp(t, tenant, "quiet1", SELF_CONFIG);
  const res = await send(t, tenant.user, "POST", `/clusters/${id}/nodes`, { numMachines: 1 });
  assertOk(t, res, "adding 1 node");
  await waitForStatus(t.context.sys.baseUrl, tenant.user, id, "active");
  const nodes: NodeBody[] = (await get(t, tenant.user, `/clusters/${id}`)).nodes;
  t.is(nodes.length, 4);
  for (const node of nodes.slice(0, 3)) {
    t.deepEqual(node.actions.filter((a) => a.taskId.startsWith(`${res.body.planId}-`)), [], `${node.id} gets no task`);
  }
});

test("add nodes: refusals", async (t) => {
  const tenant = await tenantWithSimCatalog(t.context.sys, "growno", { workers: 4, tenant: { maxNodes: 5 } });
  const id = await webapp(t, tenant, "refuse1");
  const add = (body: unknown, query = "") => send(t, tenant.user, "POST", `/clusters/${id}/nodes${query}`, body);

  assertError(t, await send(t, tenant.user, "POST", "/clusters/99999999/nodes", { numMachines: 1 }), 404, "unknown cluster");
  assertError(t, await add({ numMachines: 0 }), 400, "numMachines 0");
  assertError(t, await add({ numMachines: "two" }), 400, "numMachines not a number");
  assertError(t, await add({}), 400, "no numMachines");

  const tooMany = await add({ numMachines: 1, services: ["postgresql"] });
  assertError(t, tooMany, 400, "a second postgresql node breaks its max");
  t.is(tooMany.body?.details?.constraint, "quantities");
  const stranger = await add({ numMachines: 1, services: ["no-such-service"] });
  assertError(t, stranger, 400, "a service not on the cluster");
  t.is(stranger.body?.details?.constraint, "services");

  const overQuota = await add({ numMachines: 3 });
  assertError(t, overQuota, 409, "3 + 3 nodes over maxNodes 5");
  assertError(t, await add({ numMachines: 3 }, "?dryRun=true"), 409, "dry run: over maxNodes");

  const started = await add({ numMachines: 1 });
  assertOk(t, started, "adding 1 node");
  assertError(t, await add({ numMachines: 1 }), 409, "a running action");
  await waitForStatus(t.context.sys.baseUrl, tenant.user, id, "active");
  assertError(t, await add({ numMachines: 2 }), 409, "4 + 2 nodes over maxNodes 5");
  t.is((await get(t, tenant.user, `/clusters/${id}`)).nodes.length, 4);
});
