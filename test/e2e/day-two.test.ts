/**
 * End to end through REST on `sim`: adding nodes to a live cluster (`POST /clusters/{id}/nodes`, docs/api.md). The
 * dry run answers the grown layout and the plan and changes nothing; the real request lays out the new nodes with
 * the solver service, numbers them after the existing ones, brings them up, and sends CONFIGURE to the existing
 * nodes whose expanded config lists them; refusals answer 400 naming the constraint, 404 and 409. Removing nodes
 * (`DELETE /clusters/{id}/nodes/{nodeId}`, `POST /clusters/{id}/nodes/remove`) is the mirror image: the removed
 * nodes are deleted and leave the cluster, the peers are reconfigured, and a removal that would break size.min, a
 * quantities.min or a requires answers 409 naming it; the services whose last node leaves leave the cluster, and a
 * removal that fails keeps its nodes. Replacing a node (`POST /clusters/{id}/nodes/{nodeId}/replace`) brings up a
 * new node with its services and types, reconfigures the peers and deletes the old machine (none when its health
 * says it is missing); a template's `administration.repair` does the same by itself for a node reported missing,
 * once. Health reports are the test's own, published as a provisioner would.
 */
import { clusterEventFilter, encode, healthReportSubject, type ClusterStatusEvent, type NodeHealthReport, type NodeHealthState } from "@corral/contracts";
import { startClustersService } from "@corral/clusters";
import { silentLogger } from "@corral/shared";
import { api, type ApiResponse, type Caller } from "../helpers/api.js";
import { assertError, assertOk } from "../helpers/assertions.js";
import { createActiveCluster, getOk, latestPlan, readEvents, tenantWithSimCatalog, waitForStatus, type E2eTenant } from "../helpers/clusters.js";
import { eventually } from "../helpers/eventually.js";
import { fixtureTemplate } from "../helpers/fixture-catalog.js";
import { testWithSystem, type SystemTest } from "../helpers/system-test.js";

// Two provisioners (capacity 20 each): every test's tenant gets its workers, whatever order the tests start in. The
// replacement and repair tests run one at a time, before the others, to keep the system's load down.
const test = testWithSystem({ clusters: 1, provisioners: 2, reconcileIntervalMs: 500 });
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

const webappTemplate = fixtureTemplate("webapp");
/** webapp that needs at least 3 nodes. */
const minSizeWebapp = {
  ...webappTemplate,
  name: "webapp-min3",
  constraints: { ...webappTemplate.constraints, size: { min: 3 } },
};
/** webapp whose `base` (on every node) must be on at least 4 nodes. */
const minBaseWebapp = {
  ...webappTemplate,
  name: "webapp-base4",
  constraints: { ...webappTemplate.constraints, services: { ...webappTemplate.constraints?.services, base: { quantities: { min: 4 } } } },
};
const withoutPostgres = (nodes: NodeBody[]) => nodes.filter((n) => !n.services.includes("postgresql"));

test("remove nodes: one of 5 is deleted and leaves the cluster, its peers are reconfigured, its id is never given again", async (t) => {
  const tenant = await tenantWithSimCatalog(t.context.sys, "shrink", { workers: 4 });
  const id = await createActiveCluster(t.context.sys.baseUrl, tenant.user, {
    name: "shrink1",
    clusterTemplate: "webapp",
    numMachines: 5,
    config: PEERS_CONFIG,
  });
  const before = await get(t, tenant.user, `/clusters/${id}`);
  const nodes: NodeBody[] = before.nodes;
  t.is(nodes.length, 5);
  const leaving = withoutPostgres(nodes).at(-1)!;

  const dry = await send(t, tenant.user, "DELETE", `/clusters/${id}/nodes/${leaving.id}?dryRun=true`);
  assertOk(t, dry, "dry run of removing a node");
  t.like(dry.body, { dryRun: true, clusterId: id, plan: { action: "REMOVE_NODES" } });
  t.deepEqual(
    dry.body.layout.nodes.map((n: { id: string }) => n.id),
    nodes.filter((n) => n.id !== leaving.id).map((n) => n.id),
    "the layout without the node",
  );
  t.deepEqual(await get(t, tenant.user, `/clusters/${id}`), before, "a dry run changes nothing");

  const res = await send(t, tenant.user, "DELETE", `/clusters/${id}/nodes/${leaving.id}`, { restart: false });
  assertOk(t, res, "removing a node");
  const planId: string = res.body.planId;
  t.is((await get(t, tenant.user, `/clusters/${id}/status`)).action, "remove_nodes");
  await waitForStatus(t.context.sys.baseUrl, tenant.user, id, "active");
  t.like(await get(t, tenant.user, `/clusters/${id}/status`), { status: "active", action: "remove_nodes", actionstatus: "complete" });

  const after = await get(t, tenant.user, `/clusters/${id}`);
  const remaining: NodeBody[] = after.nodes;
  t.deepEqual(remaining.map((n) => n.id), nodes.filter((n) => n.id !== leaving.id).map((n) => n.id), "4 nodes remain");
  const plan = await latestPlan(t.context.sys.baseUrl, tenant.user, id);
  t.is(plan.id, planId);
  t.is(plan.action, "REMOVE_NODES");
  const tasksOf = (nodeId: string) => plan.stages.flat().filter((task) => task.nodeId === nodeId);
  const leavingTasks: string[] = tasksOf(leaving.id).map((task) => task.taskName);
  for (const name of ["STOP", "REMOVE", "DELETE"]) t.true(leavingTasks.includes(name), `the removed node got ${name}`);
  for (const node of remaining) {
    const actions = node.actions.filter((a) => a.taskId.startsWith(`${planId}-`));
    t.true(actions.length > 0 && actions.every((a) => a.action === "CONFIGURE" && a.status === "complete"), `${node.id} is only reconfigured`);
  }

  assertError(t, await send(t, tenant.user, "DELETE", `/clusters/${id}/nodes/${leaving.id}`), 404, "a node already removed");
  const grown = await send(t, tenant.user, "POST", `/clusters/${id}/nodes?dryRun=true`, { numMachines: 1 });
  assertOk(t, grown, "dry run of adding a node after the removal");
  const ids: string[] = grown.body.layout.nodes.map((n: { id: string }) => n.id);
  t.false(ids.includes(leaving.id), "the removed node's id is not given again");
  t.is(ids.at(-1), `${id}-1005`);
});

test("remove nodes: the list form removes several nodes in one plan", async (t) => {
  const tenant = await tenantWithSimCatalog(t.context.sys, "shrinkl", { workers: 4 });
  const id = await createActiveCluster(t.context.sys.baseUrl, tenant.user, { name: "shrink2", clusterTemplate: "webapp", numMachines: 5 });
  const nodes: NodeBody[] = (await get(t, tenant.user, `/clusters/${id}`)).nodes;
  const leaving = withoutPostgres(nodes).slice(-2).map((n) => n.id);
  const res = await send(t, tenant.user, "POST", `/clusters/${id}/nodes/remove`, { nodes: leaving });
  assertOk(t, res, "removing two nodes");
  await waitForStatus(t.context.sys.baseUrl, tenant.user, id, "active");
  const remaining: NodeBody[] = (await get(t, tenant.user, `/clusters/${id}`)).nodes;
  t.deepEqual(remaining.map((n) => n.id), nodes.map((n) => n.id).filter((n) => !leaving.includes(n)));
  const plan = await latestPlan(t.context.sys.baseUrl, tenant.user, id);
  t.is(plan.id, res.body.planId);
  for (const nodeId of leaving) {
    t.true(plan.stages.flat().some((task) => task.nodeId === nodeId && task.taskName === "DELETE"), `${nodeId} deleted`);
  }
});

test("remove nodes: refusals name the constraint; unknown clusters and nodes are 404; bad bodies 400", async (t) => {
  const tenant = await tenantWithSimCatalog(t.context.sys, "shrinkno", { workers: 4, catalog: { extraTemplates: [minSizeWebapp, minBaseWebapp] } });
  const { baseUrl } = t.context.sys;
  const small = await createActiveCluster(baseUrl, tenant.user, { name: "min3", clusterTemplate: "webapp-min3", numMachines: 3 });
  const base4 = await createActiveCluster(baseUrl, tenant.user, { name: "base4", clusterTemplate: "webapp-base4", numMachines: 4 });
  const nodesOf = async (id: string): Promise<NodeBody[]> => (await get(t, tenant.user, `/clusters/${id}`)).nodes;
  const removeOne = (id: string, nodeId: string, query = "") => send(t, tenant.user, "DELETE", `/clusters/${id}/nodes/${nodeId}${query}`);

  const smallNodes = await nodesOf(small);
  const size = await removeOne(small, withoutPostgres(smallNodes)[0]!.id);
  assertError(t, size, 409, "3 -> 2 nodes under size.min 3");
  t.is(size.body?.details?.constraint, "size");
  assertError(t, await removeOne(small, withoutPostgres(smallNodes)[0]!.id, "?dryRun=true"), 409, "dry run: size.min");

  const baseNodes = await nodesOf(base4);
  const quantities = await removeOne(base4, withoutPostgres(baseNodes)[0]!.id);
  assertError(t, quantities, 409, "base on 3 nodes under its quantities.min 4");
  t.is(quantities.body?.details?.constraint, "quantities");
  t.regex(quantities.body?.message ?? "", /base/);

  const plain = await createActiveCluster(baseUrl, tenant.user, { name: "plain3", clusterTemplate: "webapp", numMachines: 3 });
  const plainNodes = await nodesOf(plain);
  // The only postgresql (sql-database) leaves while node-app stays on the other nodes.
  const database = plainNodes.find((n) => n.services.includes("postgresql"))!;
  t.true(withoutPostgres(plainNodes).some((n) => n.services.includes("node-app")), "node-app is on another node too");
  const requires = await removeOne(plain, database.id);
  assertError(t, requires, 409, "node-app left without sql-database");
  t.is(requires.body?.details?.constraint, "requires");
  t.regex(requires.body?.message ?? "", /node-app requires sql-database/);

  assertError(t, await send(t, tenant.user, "DELETE", `/clusters/99999999/nodes/99999999-1000`), 404, "unknown cluster");
  assertError(t, await removeOne(plain, `${plain}-1999`), 404, "unknown node");
  assertError(t, await send(t, tenant.user, "POST", `/clusters/${plain}/nodes/remove`, { nodes: [plainNodes[1]!.id, `${plain}-1999`] }), 404, "one unknown node");
  assertError(t, await send(t, tenant.user, "POST", `/clusters/${plain}/nodes/remove`, { nodes: [] }), 400, "no nodes");
  assertError(t, await send(t, tenant.user, "POST", `/clusters/${plain}/nodes/remove`, {}), 400, "no nodes field");
  assertError(t, await removeOne(plain, plainNodes[1]!.id, "?dryRun=maybe"), 400, "dryRun not a boolean");

  const started = await send(t, tenant.user, "POST", `/clusters/${plain}/nodes`, { numMachines: 1 });
  assertOk(t, started, "adding a node");
  assertError(t, await removeOne(plain, withoutPostgres(plainNodes)[0]!.id), 409, "a running action");
  await waitForStatus(baseUrl, tenant.user, plain, "active");
  t.is((await nodesOf(plain)).length, 4, "the refused removals took no node; the added one is there");
});

/** Publishes a health finding for one node as the provisioner checking the tenant would, and waits until the API shows it. */
async function reportHealth(t: T, tenant: E2eTenant, clusterId: string, nodeId: string, state: NodeHealthState): Promise<void> {
  const report: NodeHealthReport = {
    tenant: tenant.name,
    provisionerId: "day-two-test",
    full: false,
    nodes: [{ clusterId, nodeId, state, message: `test: ${state}`, checkedAt: Date.now() }],
  };
  t.context.sys.nc.publish(healthReportSubject(tenant.name), encode(report));
  await eventually(
    async () => ((await get(t, tenant.user, `/clusters/${clusterId}`)).nodes as Array<{ id: string; health?: { state: string } }>).some(
      (n) => n.id === nodeId && n.health?.state === state,
    ),
    { what: `node ${nodeId} ${state}`, timeoutMs: 10_000 },
  );
}

const typesOf = (n: NodeBody) => ({ hardwaretype: n.properties["hardwaretype"], imagetype: n.properties["imagetype"] });

test.serial("replace a node: a dry run changes nothing; a new node with its services and types, the peers reconfigured, the old machine deleted", async (t) => {
  const tenant = await tenantWithSimCatalog(t.context.sys, "replace", { workers: 2 });
  const id = await webapp(t, tenant, "replace1", PEERS_CONFIG);
  const before = await get(t, tenant.user, `/clusters/${id}`);
  const nodes: NodeBody[] = before.nodes;
  const old = nodes[1]!;
  const expectedIds = [nodes[0]!.id, nodes[2]!.id, `${id}-1003`];

  const dry = await send(t, tenant.user, "POST", `/clusters/${id}/nodes/${old.id}/replace?dryRun=true`);
  assertOk(t, dry, "dry run of replacing a node");
  t.like(dry.body, { dryRun: true, clusterId: id, plan: { action: "REPLACE_NODE" } });
  t.deepEqual(dry.body.layout.nodes.map((n: { id: string }) => n.id), expectedIds, "the layout with the new node instead of the old");
  t.like(dry.body.layout.nodes[2], { services: old.services, ...typesOf(old) });
  t.deepEqual(await get(t, tenant.user, `/clusters/${id}`), before, "a dry run changes nothing");

  const res = await send(t, tenant.user, "POST", `/clusters/${id}/nodes/${old.id}/replace`, {});
  assertOk(t, res, "replacing a node");
  const planId: string = res.body.planId;
  t.is((await get(t, tenant.user, `/clusters/${id}/status`)).action, "replace_node");
  await waitForStatus(t.context.sys.baseUrl, tenant.user, id, "active");
  t.like(await get(t, tenant.user, `/clusters/${id}/status`), { status: "active", action: "replace_node", actionstatus: "complete" });

  const after: NodeBody[] = (await get(t, tenant.user, `/clusters/${id}`)).nodes;
  t.deepEqual(after.map((n) => n.id), expectedIds, "the old node is gone, the new one numbered next");
  const added = after[2]!;
  t.deepEqual(added.services, old.services, "the same services");
  t.deepEqual(typesOf(added), typesOf(old), "the same hardware and image type");

  const plan = await latestPlan(t.context.sys.baseUrl, tenant.user, id);
  t.is(plan.id, planId);
  t.is(plan.action, "REPLACE_NODE");
  const tasksOf = (nodeId: string) => plan.stages.flat().filter((task) => task.nodeId === nodeId).map((task) => task.taskName);
  t.deepEqual([...new Set(tasksOf(old.id))], ["DELETE"], "the old machine is deleted, nothing else");
  for (const name of ["CREATE", "CONFIRM", "BOOTSTRAP", "INSTALL", "CONFIGURE", "INITIALIZE", "START"]) {
    t.true(tasksOf(added.id).includes(name), `the new node got ${name}`);
  }
  for (const node of after.slice(0, 2)) {
    const actions = node.actions.filter((a) => a.taskId.startsWith(`${planId}-`));
    t.true(actions.length > 0 && actions.every((a) => a.action === "CONFIGURE" && a.status === "complete"), `${node.id} is only reconfigured`);
  }
  const statusEvents = (await readEvents<ClusterStatusEvent>(t.context.sys.nc, clusterEventFilter(tenant.name, id))).map((e) => e.data);
  t.true(
    statusEvents.some((e) => e.type === "cluster.status" && e.action === "replace_node" && e.planId === planId && e.status === "pending"),
    "the event stream shows the replacement starting",
  );
  assertError(t, await send(t, tenant.user, "POST", `/clusters/${id}/nodes/${old.id}/replace`), 404, "a node already replaced");
});

test.serial("replace a node whose machine is missing: nothing is sent to the old machine", async (t) => {
  const tenant = await tenantWithSimCatalog(t.context.sys, "replacem", { workers: 2 });
  const id = await webapp(t, tenant, "replace2", PEERS_CONFIG);
  const old: NodeBody = (await get(t, tenant.user, `/clusters/${id}`)).nodes[2];
  await reportHealth(t, tenant, id, old.id, "missing");
  const res = await send(t, tenant.user, "POST", `/clusters/${id}/nodes/${old.id}/replace`, { restart: true });
  assertOk(t, res, "replacing a missing node");
  await waitForStatus(t.context.sys.baseUrl, tenant.user, id, "active");
  const plan = await latestPlan(t.context.sys.baseUrl, tenant.user, id);
  t.is(plan.id, res.body.planId);
  t.deepEqual(plan.stages.flat().filter((task) => task.nodeId === old.id), [], "no task for the missing machine");
  const after: NodeBody[] = (await get(t, tenant.user, `/clusters/${id}`)).nodes;
  t.deepEqual(after.map((n) => n.id), [`${id}-1000`, `${id}-1001`, `${id}-1003`]);
  const restarted = after[0]!.actions.filter((a) => a.taskId.startsWith(`${res.body.planId}-`)).map((a) => a.action);
  t.true(restarted.includes("STOP") && restarted.includes("START"), "restart: true restarts the reconfigured services");
});

test.serial("replace a node: refusals", async (t) => {
  const tenant = await tenantWithSimCatalog(t.context.sys, "replaceno", { workers: 2, tenant: { maxNodes: 4 } });
  const { baseUrl } = t.context.sys;
  const id = await webapp(t, tenant, "replace3");
  const nodes: NodeBody[] = (await get(t, tenant.user, `/clusters/${id}`)).nodes;
  const replace = (nodeId: string, body?: unknown, query = "") => send(t, tenant.user, "POST", `/clusters/${id}/nodes/${nodeId}/replace${query}`, body);

  assertError(t, await send(t, tenant.user, "POST", `/clusters/99999999/nodes/99999999-1000/replace`), 404, "unknown cluster");
  assertError(t, await replace(`${id}-1999`), 404, "unknown node");
  assertError(t, await replace(`${id}-1999`, undefined, "?dryRun=true"), 404, "dry run: unknown node");
  assertError(t, await replace(nodes[0]!.id, { restart: "maybe" }), 400, "restart not a boolean");
  assertError(t, await replace(nodes[0]!.id, undefined, "?dryRun=maybe"), 400, "dryRun not a boolean");
  assertError(t, await send(t, tenant.other, "POST", `/clusters/${id}/nodes/${nodes[0]!.id}/replace`), 404, "another user's cluster");

  const started = await replace(nodes[0]!.id);
  assertOk(t, started, "replacing a node within maxNodes 4 (3 + 1 while it runs)");
  assertError(t, await replace(nodes[1]!.id), 409, "a running action");
  await waitForStatus(baseUrl, tenant.user, id, "active");
  t.is((await get(t, tenant.user, `/clusters/${id}`)).nodes.length, 3);
  assertOk(t, await send(t, tenant.user, "POST", `/clusters/${id}/nodes`, { numMachines: 1 }), "growing to 4");
  await waitForStatus(baseUrl, tenant.user, id, "active");
  assertError(t, await replace(nodes[1]!.id), 409, "4 + 1 nodes over maxNodes 4");
  assertError(t, await replace(nodes[1]!.id, undefined, "?dryRun=true"), 409, "dry run: over maxNodes");
  t.is((await get(t, tenant.user, `/clusters/${id}`)).nodes.length, 4, "the refusals took and added nothing");
});

/** A template of nodes with `base`, and `redis` on at most one of them: nothing requires `redis`. */
const cacheTemplate = {
  ...webappTemplate,
  name: "cache-pair",
  compatibility: { ...webappTemplate.compatibility, services: ["base", "redis"] },
  defaults: { ...webappTemplate.defaults, services: ["base", "redis"], config: {} },
  constraints: { services: { redis: { quantities: { max: 1 } } } },
};

test.serial("remove nodes: a service whose last node leaves leaves the cluster; a removal that fails keeps its nodes and services", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithSimCatalog(t.context.sys, "shrinks", { workers: 2, catalog: { extraTemplates: [cacheTemplate] } });
  const id = await createActiveCluster(baseUrl, tenant.user, { name: "cache1", clusterTemplate: "cache-pair", numMachines: 2 });
  const nodes: NodeBody[] = (await get(t, tenant.user, `/clusters/${id}`)).nodes;
  const cache = nodes.find((n) => n.services.includes("redis"))!;
  t.deepEqual((await get(t, tenant.user, `/clusters/${id}/services`)).sort(), ["base", "redis"]);

  const dry = await send(t, tenant.user, "DELETE", `/clusters/${id}/nodes/${cache.id}?dryRun=true`);
  assertOk(t, dry, "dry run of removing the redis node");
  t.deepEqual(dry.body.layout.services, ["base"], "the dry run shows redis leaving");
  assertOk(t, await send(t, tenant.user, "DELETE", `/clusters/${id}/nodes/${cache.id}`), "removing the redis node");
  await waitForStatus(baseUrl, tenant.user, id, "active");
  t.deepEqual(await get(t, tenant.user, `/clusters/${id}/services`), ["base"], "redis left with its last node");
  t.deepEqual((await get(t, tenant.user, `/clusters/${id}`)).services, ["base"]);

  // Every DELETE fails on this tenant's machines: the removal fails and keeps what it would have taken.
  const failing = await tenantWithSimCatalog(t.context.sys, "shrinkf", {
    workers: 2,
    catalog: { extraTemplates: [cacheTemplate], providerFields: { fail_delete: "true" } },
  });
  const kept = await createActiveCluster(baseUrl, failing.user, { name: "cache2", clusterTemplate: "cache-pair", numMachines: 2 });
  const keptNodes: NodeBody[] = (await get(t, failing.user, `/clusters/${kept}`)).nodes;
  const leaving = keptNodes.find((n) => n.services.includes("redis"))!;
  assertOk(t, await send(t, failing.user, "DELETE", `/clusters/${kept}/nodes/${leaving.id}`), "a removal bound to fail");
  await waitForStatus(baseUrl, failing.user, kept, "inconsistent", 60_000);
  t.like(await get(t, failing.user, `/clusters/${kept}/status`), { status: "inconsistent", action: "remove_nodes", actionstatus: "failed" });
  const after = await get(t, failing.user, `/clusters/${kept}`);
  t.deepEqual(after.nodes.map((n: NodeBody) => n.id), keptNodes.map((n) => n.id), "both nodes stay");
  t.deepEqual([...after.services].sort(), ["base", "redis"], "and so do their services");
  assertError(t, await send(t, failing.user, "POST", `/clusters/${kept}/nodes/${leaving.id}/replace`), 409, "no replacement on an inconsistent cluster");
});

/** webapp with automatic repair after a second. */
const repairWebapp = {
  ...webappTemplate,
  name: "webapp-repair",
  administration: { leaseduration: { initial: 0, max: 0, step: 0 }, repair: { auto: true, afterSeconds: 1 } },
};

test.serial("automatic repair: a node missing past the template's time is replaced once; without repair nothing happens", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithSimCatalog(t.context.sys, "repair", { workers: 2, catalog: { extraTemplates: [repairWebapp] } });
  const id = await createActiveCluster(baseUrl, tenant.user, { name: "repair1", clusterTemplate: "webapp-repair", numMachines: 3, config: PEERS_CONFIG });
  const plain = await webapp(t, tenant, "norepair1");
  const old: NodeBody = (await get(t, tenant.user, `/clusters/${id}`)).nodes[1];
  const plainOld: NodeBody = (await get(t, tenant.user, `/clusters/${plain}`)).nodes[1];
  await reportHealth(t, tenant, plain, plainOld.id, "missing");
  await reportHealth(t, tenant, id, old.id, "missing");

  const repaired = await eventually(
    async () => {
      const cluster = await get(t, tenant.user, `/clusters/${id}`);
      return cluster.jobs.length === 2 && cluster.status === "active" ? cluster : false;
    },
    { what: "the repair's plan done", timeoutMs: 30_000 },
  );
  t.like(await get(t, tenant.user, `/clusters/${id}/status`), { action: "replace_node", actionstatus: "complete" });
  const after: NodeBody[] = repaired.nodes;
  t.deepEqual(after.map((n) => n.id), [`${id}-1000`, `${id}-1002`, `${id}-1003`], "the missing node was replaced");
  t.deepEqual(after[2]!.services, old.services);
  const plan = await latestPlan(baseUrl, tenant.user, id);
  t.is(plan.action, "REPLACE_NODE");
  t.deepEqual(plan.stages.flat().filter((task) => task.nodeId === old.id), [], "nothing sent to the missing machine");

  // A late report about the old node changes nothing: it is no node of the cluster any more.
  t.context.sys.nc.publish(
    healthReportSubject(tenant.name),
    encode({
      tenant: tenant.name,
      provisionerId: "day-two-test",
      full: false,
      nodes: [{ clusterId: id, nodeId: old.id, state: "missing", message: "late", checkedAt: Date.now() }],
    } satisfies NodeHealthReport),
  );
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  t.is((await get(t, tenant.user, `/clusters/${id}`)).jobs.length, 2, "no second replacement");
  const oldHealthEvents = (await readEvents<{ type: string; nodeId?: string }>(t.context.sys.nc, clusterEventFilter(tenant.name, id)))
    .map((e) => e.data)
    .filter((e) => e.type === "node.health" && e.nodeId === old.id);
  t.is(oldHealthEvents.length, 1, "the late report about the gone node is ignored: only the first finding was announced");
  const untouched = await get(t, tenant.user, `/clusters/${plain}`);
  t.is(untouched.jobs.length, 1, "a template without repair: the missing node stays");
  t.true(untouched.nodes.some((n: NodeBody) => n.id === plainOld.id));
});

test.serial("automatic repair survives a restart of the clusters service: the new instance repairs what the old one had not", async (t) => {
  const { sys } = t.context;
  const slowRepair = { ...repairWebapp, name: "webapp-repair3", administration: { ...repairWebapp.administration, repair: { auto: true, afterSeconds: 3 } } };
  const tenant = await tenantWithSimCatalog(sys, "repairk", { workers: 2, catalog: { extraTemplates: [slowRepair] } });
  const id = await createActiveCluster(sys.baseUrl, tenant.user, { name: "repair2", clusterTemplate: "webapp-repair3", numMachines: 3 });
  const old: NodeBody = (await get(t, tenant.user, `/clusters/${id}`)).nodes[2];
  await reportHealth(t, tenant, id, old.id, "missing");
  // Stopped before the 3 s pass: the only record of the dead node is its stored health.
  await sys.clusterServices[0]!.stop();
  await new Promise((resolve) => setTimeout(resolve, 3_500));
  sys.clusterServices[0] = await startClustersService({ nc: sys.nc, log: silentLogger, reconcileIntervalMs: 500 });
  const repaired = await eventually(
    async () => {
      const cluster = await get(t, tenant.user, `/clusters/${id}`);
      return cluster.jobs.length === 2 && cluster.status === "active" ? cluster : false;
    },
    { what: "the repair done by the new instance", timeoutMs: 30_000 },
  );
  t.deepEqual(
    repaired.nodes.map((n: NodeBody) => n.id),
    [`${id}-1000`, `${id}-1001`, `${id}-1003`],
  );
  t.like(await get(t, tenant.user, `/clusters/${id}/status`), { action: "replace_node", actionstatus: "complete" });
});
