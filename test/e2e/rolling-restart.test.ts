/**
 * End to end through REST on `sim`: rolling restarts (docs/catalog.md, Rolling restarts). A restart, a configure
 * with restart and the restart of a day-two call with `rolling: {maxUnavailable: N}` stop and start each service's
 * nodes in batches: the dry run shows the batches, the plan the request starts has the same stages, and the node
 * action histories (STOP submitted to START done, per node) never have more than N nodes of the service down at
 * once. A template's quantities.min makes the batches smaller, or the request a 400 naming the constraint when not
 * even one node may stop; a malformed `rolling` is a 400 naming the field. The tests run one at a time: each
 * creates 4-node clusters, and timing is what they check.
 */
import { api, type ApiResponse, type Caller } from "../helpers/api.js";
import { assertError, assertOk } from "../helpers/assertions.js";
import { createActiveCluster, getOk, waitForStatus, tenantWithSimCatalog, type E2eTenant } from "../helpers/clusters.js";
import { fixtureTemplate } from "../helpers/fixture-catalog.js";
import { testWithSystem, type SystemTest } from "../helpers/system-test.js";

const test = testWithSystem({ clusters: 1, provisioners: 1, reconcileIntervalMs: 500 });
type T = SystemTest;

const send = (t: T, caller: Caller, method: string, path: string, body?: unknown): Promise<ApiResponse<any>> =>
  api(t.context.sys.baseUrl, method, path, { ...caller, ...(body !== undefined ? { body } : {}) });
const get = <B = any>(t: T, caller: Caller, path: string): Promise<B> => getOk<B>(t.context.sys.baseUrl, caller, path);

interface Task {
  id?: string;
  taskName: string;
  nodeId: string;
  service?: string;
}
interface NodeBody {
  id: string;
  services: string[];
  actions: Array<{ taskId: string; service: string; action: string; status: string; submitTime: number; statusTime: number }>;
}

/** STOP and START of nginx and node-app take a moment, so that overlapping downtimes would show in the histories. */
const SLOW_RESTARTS = {
  scripts: {
    nginx: { stop: { script: "sleep", args: "0.1" }, start: { script: "sleep", args: "0.1" } },
    "node-app": { stop: { script: "sleep", args: "0.1" }, start: { script: "sleep", args: "0.1" } },
  },
};

const webappTemplate = fixtureTemplate("webapp");
/** webapp whose nginx must run on at least `min` nodes. */
const nginxMin = (min: number) => ({
  ...webappTemplate,
  name: `webapp-nginx${min}`,
  constraints: { ...webappTemplate.constraints, services: { ...webappTemplate.constraints?.services, nginx: { quantities: { min } } } },
});

let shared: Promise<E2eTenant> | undefined;
/** The tenant every test uses (its four workers run one test's clusters at a time). */
function rollingTenant(t: T): Promise<E2eTenant> {
  shared ??= tenantWithSimCatalog(t.context.sys, "roll", {
    workers: 4,
    catalog: { ...SLOW_RESTARTS, extraTemplates: [nginxMin(3), nginxMin(4)] },
  });
  return shared;
}

/** A 4-node cluster of `template` with nginx on every node. */
async function fourNginxNodes(
  t: T,
  tenant: E2eTenant,
  name: string,
  template: string,
  config?: object,
): Promise<{ id: string; nodes: NodeBody[] }> {
  const body = { name, clusterTemplate: template, numMachines: 4, ...(config ? { config } : {}) };
  const id = await createActiveCluster(t.context.sys.baseUrl, tenant.user, body, 90_000);
  const nodes: NodeBody[] = (await get(t, tenant.user, `/clusters/${id}`)).nodes;
  t.deepEqual(
    nodes.filter((n) => n.services.includes("nginx")).map((n) => n.id),
    nodes.map((n) => n.id),
    "nginx runs on all four nodes",
  );
  return { id, nodes };
}

/**
 * Per service, the most nodes the plan has stopped and not yet started again during any stage (a stage's STOPs
 * counted before its STARTs, as they run side by side).
 */
function mostDownInPlan(stages: Task[][]): Map<string, number> {
  const down = new Map<string, Set<string>>();
  const most = new Map<string, number>();
  for (const stage of stages) {
    for (const task of stage) {
      if (task.taskName !== "STOP" || !task.service) continue;
      const nodes = down.get(task.service) ?? new Set<string>();
      nodes.add(task.nodeId);
      down.set(task.service, nodes);
      most.set(task.service, Math.max(most.get(task.service) ?? 0, nodes.size));
    }
    for (const task of stage) if (task.taskName === "START" && task.service) down.get(task.service)?.delete(task.nodeId);
  }
  return most;
}

/** The nodes of each batch of a restart of `service`: the nodes of each run of STOP stages before the STARTs. */
function stopBatches(stages: Task[][], service: string): string[][] {
  const batches: string[][] = [];
  let open = false;
  for (const stage of stages) {
    const stops = stage.filter((x) => x.taskName === "STOP" && x.service === service).map((x) => x.nodeId);
    if (stops.length > 0) {
      if (!open) batches.push([]);
      batches.at(-1)!.push(...stops);
      open = true;
    }
    if (stage.some((x) => x.taskName === "START" && x.service === service)) open = false;
  }
  return batches;
}

/**
 * The most nodes of `service` down at one moment by the node histories of `planId`: each node is down from the
 * submission of its STOP to the end of its START.
 */
function mostDownInHistories(t: T, nodes: NodeBody[], planId: string, service: string): number {
  const events: Array<[time: number, change: number]> = [];
  for (const node of nodes) {
    const ofPlan = node.actions.filter((a) => a.taskId.startsWith(`${planId}-`) && a.service === service);
    const stop = ofPlan.find((a) => a.action === "STOP");
    const start = ofPlan.find((a) => a.action === "START");
    if (!stop) continue; // not restarted, or a new node's first START
    if (!start) {
      t.fail(`${node.id}: ${service} is stopped and not started again in ${planId}`);
      continue;
    }
    t.true(stop.status === "complete" && start.status === "complete", `${node.id}: ${service} restarted`);
    t.true(stop.submitTime <= start.submitTime, `${node.id}: ${service} stopped before it started`);
    events.push([stop.submitTime, 1], [start.statusTime, -1]);
  }
  // At the same millisecond an end comes before a beginning: a batch starts once the one before it has ended.
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let down = 0;
  let most = 0;
  for (const [, change] of events) {
    down += change;
    most = Math.max(most, down);
  }
  return most;
}

/** Waits for the cluster's job to end with the cluster active (generous: the machine may be busy). */
const settled = (t: T, tenant: E2eTenant, id: string) => waitForStatus(t.context.sys.baseUrl, tenant.user, id, "active", 90_000);

const withoutIds = (stages: Task[][]) => stages.map((s) => s.map((x) => `${x.taskName} ${x.nodeId} ${x.service ?? ""}`.trim()));

test.serial("rolling restart of nginx on 4 nodes: 1 at a time is 4 batches, 2 at a time 2; the plan run is the dry run's", async (t) => {
  const tenant = await rollingTenant(t);
  const { id, nodes } = await fourNginxNodes(t, tenant, "roll1", "webapp");
  const restart = (body: unknown, query = "") => send(t, tenant.user, "POST", `/clusters/${id}/services/nginx/restart${query}`, body);

  const atOnce = await restart({}, "?dryRun=true");
  assertOk(t, atOnce, "dry run of a restart without rolling");
  t.is(mostDownInPlan(atOnce.body.plan.stages).get("nginx"), 4, "without rolling every nginx stops at once");

  const dryTwo = await restart({ rolling: { maxUnavailable: 2 } }, "?dryRun=true");
  assertOk(t, dryTwo, "dry run of a rolling restart, 2 at a time");
  t.is(stopBatches(dryTwo.body.plan.stages, "nginx").length, 2);
  t.is(mostDownInPlan(dryTwo.body.plan.stages).get("nginx"), 2);

  const dryOne = await restart({ rolling: { maxUnavailable: "1" } }, "?dryRun=true");
  assertOk(t, dryOne, "dry run of a rolling restart, 1 at a time");
  t.like(dryOne.body, { dryRun: true, clusterId: id, plan: { action: "RESTART_SERVICES" } });
  const batches = stopBatches(dryOne.body.plan.stages, "nginx");
  t.deepEqual(batches, nodes.map((n) => [n.id]), "one batch per node, in node order");
  t.deepEqual(
    withoutIds(dryOne.body.plan.stages),
    nodes.flatMap((n) => [[`STOP ${n.id} nginx`], [`START ${n.id} nginx`]]),
    "each node stopped and started before the next",
  );
  t.is((await get(t, tenant.user, `/clusters/${id}/status`)).action, "cluster_create", "a dry run starts nothing");

  const res = await restart({ rolling: { maxUnavailable: 1 } });
  assertOk(t, res, "rolling restart, 1 at a time");
  const planId: string = res.body.planId;
  await settled(t, tenant, id);
  t.like(await get(t, tenant.user, `/clusters/${id}/status`), { status: "active", action: "restart_services", actionstatus: "complete" });
  const plan = await get(t, tenant.user, `/clusters/${id}/plans/${planId}`);
  t.is(plan.action, "RESTART_SERVICES");
  t.deepEqual(withoutIds(plan.stages), withoutIds(dryOne.body.plan.stages), "the plan run is the one the dry run showed");
  const after: NodeBody[] = (await get(t, tenant.user, `/clusters/${id}`)).nodes;
  t.is(mostDownInHistories(t, after, planId, "nginx"), 1, "never two nginx nodes down at once");
});

test.serial("rolling restart of the whole cluster: dependency order within each batch, at most N of each service down", async (t) => {
  const tenant = await rollingTenant(t);
  const { id } = await fourNginxNodes(t, tenant, "rollall1", "webapp");
  const res = await send(t, tenant.user, "POST", `/clusters/${id}/services/restart`, { rolling: { maxUnavailable: 2 } });
  assertOk(t, res, "rolling restart of every service");
  const planId: string = res.body.planId;
  await settled(t, tenant, id);
  const plan = await get(t, tenant.user, `/clusters/${id}/plans/${planId}`);
  const stages: Task[][] = plan.stages;
  for (const [service, most] of mostDownInPlan(stages)) t.true(most <= 2, `${service}: ${most} nodes down at once in the plan`);
  // nginx uses node-app: on each node nginx stops before node-app and starts after it.
  const stageOf = (name: string, service: string, nodeId: string) =>
    stages.findIndex((s) => s.some((x) => x.taskName === name && x.service === service && x.nodeId === nodeId));
  const nodes: NodeBody[] = (await get(t, tenant.user, `/clusters/${id}`)).nodes;
  for (const node of nodes) {
    t.true(stageOf("STOP", "nginx", node.id) < stageOf("STOP", "node-app", node.id), `${node.id}: nginx stops before node-app`);
    t.true(stageOf("START", "node-app", node.id) < stageOf("START", "nginx", node.id), `${node.id}: node-app starts before nginx`);
  }
  for (const service of ["nginx", "node-app"]) {
    t.true(mostDownInHistories(t, nodes, planId, service) <= 2, `${service}: at most 2 nodes down by the histories`);
  }
});

test.serial("rolling configure with restart: batches in the dry run and the plan", async (t) => {
  const tenant = await rollingTenant(t);
  const { id } = await fourNginxNodes(t, tenant, "rollcfg1", "webapp");
  const body = { config: { nginx: { listen: 8080 } }, restart: true, rolling: { maxUnavailable: 1 } };
  const dry = await send(t, tenant.user, "PUT", `/clusters/${id}/config?dryRun=true`, body);
  assertOk(t, dry, "dry run of a rolling configure");
  t.is(dry.body.plan.action, "CLUSTER_CONFIGURE_WITH_RESTART");
  t.is(stopBatches(dry.body.plan.stages, "nginx").length, 4);
  const res = await send(t, tenant.user, "PUT", `/clusters/${id}/config`, body);
  assertOk(t, res, "rolling configure");
  await settled(t, tenant, id);
  const plan = await get(t, tenant.user, `/clusters/${id}/plans/${res.body.planId}`);
  t.deepEqual(withoutIds(plan.stages), withoutIds(dry.body.plan.stages));
  for (const [service, most] of mostDownInPlan(plan.stages)) t.is(most, 1, `${service}: one node down at a time`);
  const nodes: NodeBody[] = (await get(t, tenant.user, `/clusters/${id}`)).nodes;
  t.is(mostDownInHistories(t, nodes, res.body.planId, "nginx"), 1);
  t.deepEqual((await get(t, tenant.user, `/clusters/${id}/config`)).nginx, { listen: 8080 });
});

test.serial("quantities.min: makes the batches smaller, or refuses when no node may stop", async (t) => {
  const tenant = await rollingTenant(t);
  const three = await fourNginxNodes(t, tenant, "rollmin3", "webapp-nginx3");
  // nginx on 4 nodes, at least 3 running: one at a time, whatever maxUnavailable asks
  const smaller = await send(t, tenant.user, "POST", `/clusters/${three.id}/services/nginx/restart?dryRun=true`, { rolling: { maxUnavailable: 3 } });
  assertOk(t, smaller, "rolling restart keeping 3 of 4 running");
  t.is(stopBatches(smaller.body.plan.stages, "nginx").length, 4);
  t.is(mostDownInPlan(smaller.body.plan.stages).get("nginx"), 1);

  const four = await fourNginxNodes(t, tenant, "rollmin4", "webapp-nginx4");
  for (const query of ["?dryRun=true", ""]) {
    const refused = await send(t, tenant.user, "POST", `/clusters/${four.id}/services/nginx/restart${query}`, { rolling: { maxUnavailable: 1 } });
    assertError(t, refused, 400, `rolling restart of nginx, 4 of 4 to keep running${query}`);
    t.like(refused.body.details, { constraint: "quantities", service: "nginx", min: 4 });
    t.regex(refused.body.message, /constraints\.services\.nginx\.quantities\.min/);
  }
  t.like(await get(t, tenant.user, `/clusters/${four.id}/status`), { action: "cluster_create", status: "active" }, "nothing started");
  // without rolling the restart is what it always was
  assertOk(t, await send(t, tenant.user, "POST", `/clusters/${four.id}/services/nginx/restart?dryRun=true`, {}), "restart at once");
});

test.serial("a malformed rolling is a 400 naming the field; rolling without a restart is a 400", async (t) => {
  const tenant = await rollingTenant(t);
  const { id } = await fourNginxNodes(t, tenant, "rollbad1", "webapp");
  const restartPath = `/clusters/${id}/services/restart`;
  for (const rolling of [{ maxUnavailable: 0 }, { maxUnavailable: -1 }, { maxUnavailable: 1.5 }, { maxUnavailable: "x" }, {}, "fast", 2]) {
    const res = await send(t, tenant.user, "POST", restartPath, { rolling });
    assertError(t, res, 400, `rolling ${JSON.stringify(rolling)}`);
    t.regex(String(res.body?.details?.field ?? ""), /^rolling/, `names the field: ${res.text}`);
  }
  const configure = await send(t, tenant.user, "PUT", `/clusters/${id}/config`, { config: {}, restart: false, rolling: { maxUnavailable: 1 } });
  assertError(t, configure, 400, "rolling on a configure without restart");
  t.is(configure.body?.details?.constraint, "rolling");
  t.like(await get(t, tenant.user, `/clusters/${id}/status`), { action: "cluster_create", status: "active" }, "nothing started");
});

/** Every node lists the hostnames of the nodes with `base` (all of them): a new node or a removed one changes every peer. */
const PEERS_CONFIG = { peers: "%join(host.service.base,',')%" };

test.serial("adding, removing and replacing nodes with restart: the peers whose config changes restart rolling", async (t) => {
  t.timeout(240_000); // a 4-node cluster, then three plans of several batches each
  const tenant = await rollingTenant(t);
  const { id, nodes } = await fourNginxNodes(t, tenant, "rollgrow1", "webapp", PEERS_CONFIG);
  const grow = { numMachines: 1, restart: true, rolling: { maxUnavailable: 1 } };
  const dry = await send(t, tenant.user, "POST", `/clusters/${id}/nodes?dryRun=true`, grow);
  assertOk(t, dry, "dry run of adding a node, restarting the peers rolling");
  t.is(dry.body.plan.action, "ADD_NODES");
  t.deepEqual(stopBatches(dry.body.plan.stages, "nginx"), nodes.map((n) => [n.id]), "the four peers one at a time");

  const refused = await send(t, tenant.user, "POST", `/clusters/${id}/nodes`, { numMachines: 1, rolling: { maxUnavailable: 1 } });
  assertError(t, refused, 400, "rolling without restart");
  t.is(refused.body?.details?.constraint, "rolling");

  const res = await send(t, tenant.user, "POST", `/clusters/${id}/nodes`, grow);
  assertOk(t, res, "adding a node, restarting the peers rolling");
  await settled(t, tenant, id);
  const plan = await get(t, tenant.user, `/clusters/${id}/plans/${res.body.planId}`);
  t.deepEqual(withoutIds(plan.stages), withoutIds(dry.body.plan.stages), "the plan run is the one the dry run showed");
  const grown: NodeBody[] = (await get(t, tenant.user, `/clusters/${id}`)).nodes;
  t.is(grown.length, 5);
  t.is(mostDownInHistories(t, grown, res.body.planId, "nginx"), 1, "never two nginx nodes down at once");

  const leaving = grown.filter((n) => !n.services.includes("postgresql")).at(-1)!;
  const removal = await send(t, tenant.user, "DELETE", `/clusters/${id}/nodes/${leaving.id}`, { restart: true, rolling: { maxUnavailable: 2 } });
  assertOk(t, removal, "removing a node, restarting the peers rolling");
  await settled(t, tenant, id);
  const removalPlan = await get(t, tenant.user, `/clusters/${id}/plans/${removal.body.planId}`);
  t.is(removalPlan.action, "REMOVE_NODES");
  const remaining: NodeBody[] = (await get(t, tenant.user, `/clusters/${id}`)).nodes;
  t.is(remaining.length, 4);
  const remainingIds = new Set(remaining.map((n) => n.id));
  const peerStages: Task[][] = removalPlan.stages.map((s: Task[]) => s.filter((x) => remainingIds.has(x.nodeId)));
  t.deepEqual(
    stopBatches(peerStages, "nginx"),
    [remaining.slice(0, 2).map((n) => n.id), remaining.slice(2).map((n) => n.id)],
    "the four peers two at a time",
  );
  t.true(mostDownInHistories(t, remaining, removal.body.planId, "nginx") <= 2, "at most two peers' nginx down at once");

  const replaced = remaining[1]!;
  const replace = await send(t, tenant.user, "POST", `/clusters/${id}/nodes/${replaced.id}/replace`, {
    restart: true,
    rolling: { maxUnavailable: 1 },
  });
  assertOk(t, replace, "replacing a node, restarting the peers rolling");
  await settled(t, tenant, id);
  const replacePlan = await get(t, tenant.user, `/clusters/${id}/plans/${replace.body.planId}`);
  t.is(replacePlan.action, "REPLACE_NODE");
  const peers = remaining.filter((n) => n.id !== replaced.id);
  const peerIds = new Set(peers.map((n) => n.id));
  t.deepEqual(
    stopBatches(replacePlan.stages.map((s: Task[]) => s.filter((x) => peerIds.has(x.nodeId))), "nginx"),
    peers.map((n) => [n.id]),
    "the three peers one at a time",
  );
  const afterReplace: NodeBody[] = (await get(t, tenant.user, `/clusters/${id}`)).nodes;
  t.is(mostDownInHistories(t, afterReplace, replace.body.planId, "nginx"), 1, "never two nginx nodes down at once");
});
