/**
 * Day-two operations on real containers (`docker` provider), through REST, checked from inside the containers
 * (docker exec): the peers catalog (test/helpers/docker-peers.ts) puts `member` on every node, whose CONFIGURE writes
 * its `%join(host.service.member,',')%` peers to a file. One cluster goes through the steps in order: created with 3
 * nodes, grown to 5 (every member's file lists all five), one node removed (the four that remain list four, its
 * container is gone), removals refused with 409 naming size, quantities and requires, a rolling restart of the
 * members one node at a time (no two down at once, by the node action histories and by the containers' own logs),
 * a container removed behind Corral's back (`docker rm -f`) turning its node's health `missing` in the API and on
 * the event stream, and that node replaced. A second cluster, of a template with `administration.repair.auto`,
 * has a removed container replaced without a request.
 */
import type { NodeHealthEvent, NodeView } from "@corral/contracts";
import { api, type ApiResponse } from "../helpers/api.js";
import { assertError, assertOk } from "../helpers/assertions.js";
import { clusterProblems, openClusterState, type ClusterState } from "../helpers/cluster-state.js";
import { createCluster, getOk, waitForStatus } from "../helpers/clusters.js";
import { docker, removeTenantContainers, tenantContainers, type DemoTenant } from "../helpers/docker-demo.js";
import { ensureDockerForTests } from "../helpers/docker-hosts.js";
import { createPeersTenant, memberEvents, peersIn, PEERS_REPAIR_TEMPLATE, PEERS_TEMPLATE } from "../helpers/docker-peers.js";
import { openSse, type SseClient } from "../helpers/event-clients.js";
import { eventually } from "../helpers/eventually.js";
import { testWithSystem, type SystemTest } from "../helpers/system-test.js";

/** Short, so a vanished container shows within a second or two. */
const HEALTH_INTERVAL_MS = 500;
const SETTLE_MS = 240_000;
const test = testWithSystem({ clusters: 1, provisioners: 1, reconcileIntervalMs: 1000, healthIntervalMs: HEALTH_INTERVAL_MS });
type T = SystemTest;

const tenants: DemoTenant[] = [];
let state: ClusterState;
/** The cluster the steps share, and its tenant. */
let tenant: DemoTenant;
let clusterId = "";
/** Nodes that left the shared cluster: the tasks of the plan that took them out have no stored node. */
const leftNodes: string[] = [];

test.before(async () => {
  await ensureDockerForTests();
});

/** The stored state's reader and the tenant; once, in the first step (the system starts in a hook of its own). */
let ready: Promise<void> | undefined;
const setUp = (t: T): Promise<void> =>
  (ready ??= (async () => {
    state = await openClusterState(t.context.sys.nc);
    tenant = await createPeersTenant(t.context.sys, "day2-docker");
    tenants.push(tenant);
  })());

test.after.always(async () => {
  for (const one of tenants) await removeTenantContainers(one.name, one.network);
});

const send = (t: T, method: string, path: string, body?: unknown): Promise<ApiResponse<any>> =>
  api(t.context.sys.baseUrl, method, path, { ...tenant.user, ...(body !== undefined ? { body } : {}) });
const nodesOf = async (t: T, id: string, owner = tenant): Promise<NodeView[]> =>
  (await getOk<{ nodes: NodeView[] }>(t.context.sys.baseUrl, owner.user, `/clusters/${id}`)).nodes;
const settle = (t: T, id: string, owner = tenant) => waitForStatus(t.context.sys.baseUrl, owner.user, id, "active", SETTLE_MS);
const hostnameOf = (node: NodeView) => String(node.properties["hostname"]);
const hasLeader = (node: NodeView) => node.services.includes("leader");

/**
 * The cluster is consistently active with `count` nodes; each node has exactly one container, the one its stored
 * `providerid` names, the cluster no other; and every container's member lists exactly the cluster's hostnames.
 * Answers the nodes and, by node id, their containers. `left`: nodes the last plan took out of the cluster.
 */
async function assertMembers(
  t: T,
  id: string,
  count: number,
  { owner = tenant, left = leftNodes }: { owner?: DemoTenant; left?: readonly string[] } = {},
): Promise<{ nodes: NodeView[]; containers: Map<string, string> }> {
  t.deepEqual(await clusterProblems(state, id, "active", { leftNodes: left }), [], "the cluster's stored state is consistent");
  const nodes = await nodesOf(t, id, owner);
  t.is(nodes.length, count, `${count} nodes`);
  const stored = new Map((await state.nodes((await state.cluster(id))!.value)).map((n) => [n.id, n]));
  t.is((await tenantContainers(owner.name, { "corral.cluster": id })).length, count, `${count} containers labelled with the cluster`);
  const hostnames = nodes.map(hostnameOf).sort();
  const containers = new Map<string, string>();
  for (const node of nodes) {
    const own = await tenantContainers(owner.name, { "corral.node": node.id });
    t.deepEqual(own, [stored.get(node.id)?.results["providerid"]], `node ${node.id}: exactly one container, the one its providerid names`);
    const container = own[0]!;
    containers.set(node.id, container);
    t.deepEqual(await peersIn(container), hostnames, `the member in ${node.id}'s container lists every member`);
  }
  return { nodes, containers };
}

/** The node's actions of one plan, as its history shows them. */
const actionsOf = (node: NodeView, planId: string) => node.actions.filter((a) => a.taskId.startsWith(`${planId}-`));

test.serial("grow 3 -> 5 on docker: two new containers, and every member's file lists all five", async (t) => {
  t.timeout(SETTLE_MS * 2);
  const { sys } = t.context;
  await setUp(t);
  clusterId = await createCluster(sys.baseUrl, tenant.user, { name: "peers", clusterTemplate: PEERS_TEMPLATE, numMachines: 3 });
  await settle(t, clusterId);
  const { nodes: three } = await assertMembers(t, clusterId, 3);
  t.is(three.filter(hasLeader).length, 1, "one leader");

  const res = await send(t, "POST", `/clusters/${clusterId}/nodes`, { numMachines: 2 });
  assertOk(t, res, "adding 2 nodes");
  const planId: string = res.body.planId;
  await settle(t, clusterId);
  t.like(await getOk(sys.baseUrl, tenant.user, `/clusters/${clusterId}/status`), { action: "add_nodes", actionstatus: "complete" });
  const { nodes } = await assertMembers(t, clusterId, 5);
  t.deepEqual(nodes.slice(0, 3).map((n) => n.id), three.map((n) => n.id), "the first three stay");
  for (const node of nodes.slice(3)) {
    t.deepEqual(node.services, ["member"], `new node ${node.id} holds member only (leader is at its max)`);
    t.true(actionsOf(node, planId).some((a) => a.action === "START" && a.status === "complete"), `${node.id} started`);
  }
  for (const node of nodes.slice(0, 3)) {
    t.true(
      actionsOf(node, planId).some((a) => a.action === "CONFIGURE" && a.service === "member" && a.status === "complete"),
      `${node.id}'s member is reconfigured`,
    );
  }
});

test.serial("remove a node on docker: its container is gone, the four that remain list four", async (t) => {
  t.timeout(SETTLE_MS);
  const before = await nodesOf(t, clusterId);
  t.is(before.length, 5);
  const leaving = before.filter((n) => !hasLeader(n)).at(-1)!;
  const res = await send(t, "DELETE", `/clusters/${clusterId}/nodes/${leaving.id}`);
  assertOk(t, res, `removing ${leaving.id}`);
  leftNodes.push(leaving.id);
  await settle(t, clusterId);
  t.like(await getOk(t.context.sys.baseUrl, tenant.user, `/clusters/${clusterId}/status`), { action: "remove_nodes", actionstatus: "complete" });
  const { nodes } = await assertMembers(t, clusterId, 4);
  t.false(nodes.some((n) => n.id === leaving.id), "the node left the cluster");
  t.deepEqual(await tenantContainers(tenant.name, { "corral.node": leaving.id }), [], "its container is gone");
});

test.serial("removals that would break the template are refused with 409 naming the constraint; nothing changes", async (t) => {
  const nodes = await nodesOf(t, clusterId);
  t.is(nodes.length, 4);
  const members = nodes.filter((n) => !hasLeader(n)).map((n) => n.id);
  const leader = nodes.find(hasLeader)!;

  const size = await send(t, "POST", `/clusters/${clusterId}/nodes/remove`, { nodes: members });
  assertError(t, size, 409, "4 -> 1 nodes under size.min 2");
  t.is(size.body?.details?.constraint, "size");
  t.regex(size.body?.message ?? "", /Size must be at least 2/);

  const quantities = await send(t, "POST", `/clusters/${clusterId}/nodes/remove`, { nodes: members.slice(0, 2) });
  assertError(t, quantities, 409, "member on 2 nodes under its quantities.min 3");
  t.is(quantities.body?.details?.constraint, "quantities");
  t.regex(quantities.body?.message ?? "", /service member must be on at least 3 nodes/);

  const requires = await send(t, "DELETE", `/clusters/${clusterId}/nodes/${leader.id}`);
  assertError(t, requires, 409, "member left without leader");
  t.is(requires.body?.details?.constraint, "requires");
  t.regex(requires.body?.message ?? "", /member requires leader/);

  t.like(await getOk(t.context.sys.baseUrl, tenant.user, `/clusters/${clusterId}/status`), { status: "active", action: "remove_nodes" });
  await assertMembers(t, clusterId, 4);
});

test.serial("a rolling restart of member with maxUnavailable 1: the histories show no two nodes down at once", async (t) => {
  t.timeout(SETTLE_MS);
  const res = await send(t, "POST", `/clusters/${clusterId}/services/member/restart`, { rolling: { maxUnavailable: 1 } });
  assertOk(t, res, "a rolling restart of member");
  const planId: string = res.body.planId;
  await settle(t, clusterId);
  const { nodes, containers } = await assertMembers(t, clusterId, 4);
  const fromApi: Array<{ nodeId: string; from: number; to: number }> = [];
  const fromInside: Array<{ nodeId: string; from: number; to: number }> = [];
  for (const node of nodes) {
    const member = actionsOf(node, planId).filter((a) => a.service === "member");
    const stop = member.find((a) => a.action === "STOP");
    const start = member.find((a) => a.action === "START");
    t.truthy(stop && start, `${node.id}: member stopped and started`);
    t.is(member.length, 2, `${node.id}: member stopped and started once`);
    if (stop && start) fromApi.push({ nodeId: node.id, from: stop.submitTime, to: start.statusTime });
    const logged = (await memberEvents(containers.get(node.id)!)).filter((e) => e.taskId.startsWith(`${planId}-`));
    const stopped = logged.find((e) => e.what === "stop");
    const started = logged.find((e) => e.what === "start");
    t.truthy(stopped && started, `${node.id}'s container logged the stop and the start`);
    if (stopped && started) fromInside.push({ nodeId: node.id, from: stopped.at, to: started.at });
  }
  for (const [source, windows] of [["node action histories", fromApi], ["the containers' own logs", fromInside]] as const) {
    const sorted = [...windows].sort((a, b) => a.from - b.from);
    t.is(sorted.length, 4, `${source}: four nodes went down`);
    for (let i = 1; i < sorted.length; i++) {
      const [prev, next] = [sorted[i - 1]!, sorted[i]!];
      t.true(next.from >= prev.to, `${source}: ${next.nodeId} went down at ${next.from}, before ${prev.nodeId} was up again at ${prev.to}`);
    }
  }
  t.false(nodes.some((n) => actionsOf(n, planId).some((a) => a.service === "leader")), "leader is not restarted");
});

/** Waits until every node of the cluster has been found healthy. */
async function allHealthy(t: T, id: string, owner = tenant): Promise<NodeView[]> {
  return eventually(
    async () => {
      const nodes = await nodesOf(t, id, owner);
      return nodes.every((n) => n.health?.state === "healthy") ? nodes : false;
    },
    { what: `every node of ${id} healthy`, timeoutMs: 30_000, intervalMs: 200 },
  );
}

/** Removes a node's container behind Corral's back; answers when it was removed. */
async function removeContainer(container: string): Promise<number> {
  await docker(["rm", "-f", "-v", container]);
  return Date.now();
}

/** The `node.health` events of the stream so far. */
const healthEvents = (sse: SseClient): NodeHealthEvent[] =>
  sse.events().map((e) => e.event).filter((e): e is NodeHealthEvent => e.type === "node.health");

test.serial("a container removed with docker rm -f: its node turns missing in the API and on the event stream", async (t) => {
  t.timeout(120_000);
  const { sys } = t.context;
  const nodes = await allHealthy(t, clusterId);
  const victim = nodes.filter((n) => !hasLeader(n)).at(-1)!;
  const container = (await tenantContainers(tenant.name, { "corral.node": victim.id }))[0]!;
  const sse = await openSse(sys.baseUrl, tenant.user, clusterId);
  try {
    t.is(sse.status, 200);
    const removedAt = await removeContainer(container);
    const missing = await eventually(
      async () => (await nodesOf(t, clusterId)).find((n) => n.id === victim.id && n.health?.state === "missing") ?? false,
      { what: `node ${victim.id} missing in GET /clusters/{id}`, timeoutMs: 30_000, intervalMs: 100 },
    );
    t.log(`missing in the API ${Date.now() - removedAt} ms after docker rm -f`);
    t.regex(missing.health!.message, /has no container|is being removed/);
    t.true(missing.health!.since >= removedAt - HEALTH_INTERVAL_MS, "since: when the check found it gone");
    await sse.waitFor(
      () => healthEvents(sse).some((e) => e.nodeId === victim.id && e.state === "missing"),
      `a node.health event of ${victim.id} turning missing`,
      30_000,
    );
    const event = healthEvents(sse).find((e) => e.nodeId === victim.id && e.state === "missing")!;
    t.is(event.previous, "healthy");
    t.is(event.clusterId, clusterId);
    const others = (await nodesOf(t, clusterId)).filter((n) => n.id !== victim.id);
    t.true(others.every((n) => n.health?.state === "healthy"), "the other nodes stay healthy");
    const othersChanged = healthEvents(sse).filter((e) => others.some((n) => n.id === e.nodeId) && e.state !== "healthy");
    t.deepEqual(othersChanged, [], "no event turns another node of the cluster unhealthy");
    // The stream replays the cluster's history: a node removed earlier may show `missing` from its own DELETE.
    const ofRemoved = healthEvents(sse).filter((e) => leftNodes.includes(e.nodeId) && e.state !== "healthy");
    if (ofRemoved.length > 0) t.log(`events of removed nodes: ${ofRemoved.map((e) => `${e.nodeId} ${e.state}: ${e.message}`).join("; ")}`);
  } finally {
    sse.close();
  }
});

test.serial("replace the missing node: a new container takes its place, the members list it, one container per node", async (t) => {
  t.timeout(SETTLE_MS);
  const before = await nodesOf(t, clusterId);
  const victim = before.find((n) => n.health?.state === "missing");
  if (!victim) return void t.fail("no missing node (the health step failed)");
  const dry = await send(t, "POST", `/clusters/${clusterId}/nodes/${victim.id}/replace?dryRun=true`, {});
  assertOk(t, dry, "dry run of the replace");
  t.like(dry.body, { dryRun: true, clusterId, plan: { action: "REPLACE_NODE" } });
  t.deepEqual((await nodesOf(t, clusterId)).map((n) => n.id), before.map((n) => n.id), "a dry run changes nothing");

  const res = await send(t, "POST", `/clusters/${clusterId}/nodes/${victim.id}/replace`, {});
  assertOk(t, res, `replacing ${victim.id}`);
  leftNodes.push(victim.id);
  await settle(t, clusterId);
  t.like(await getOk(t.context.sys.baseUrl, tenant.user, `/clusters/${clusterId}/status`), { action: "replace_node", actionstatus: "complete" });
  const { nodes } = await assertMembers(t, clusterId, 4);
  t.false(nodes.some((n) => n.id === victim.id), "the replaced node left the cluster");
  const added = nodes.filter((n) => !before.some((b) => b.id === n.id));
  t.is(added.length, 1, "one new node");
  t.deepEqual(added[0]?.services, victim.services, "with the same services");
  t.deepEqual(await tenantContainers(tenant.name, { "corral.node": victim.id }), [], "no container of the old node");
  await allHealthy(t, clusterId);
});

test.serial("repair.auto: a container removed with docker rm -f is replaced without a request", async (t) => {
  t.timeout(SETTLE_MS * 2);
  const { sys } = t.context;
  const owner = await createPeersTenant(sys, "day2-repair", { repairAfterSeconds: 2 });
  tenants.push(owner);
  const id = await createCluster(sys.baseUrl, owner.user, { name: "repair", clusterTemplate: PEERS_REPAIR_TEMPLATE, numMachines: 3 });
  await settle(t, id, owner);
  const nodes = await allHealthy(t, id, owner);
  const victim = nodes.filter((n) => !hasLeader(n)).at(-1)!;
  const removedAt = await removeContainer((await tenantContainers(owner.name, { "corral.node": victim.id }))[0]!);
  const repaired = await eventually(
    async () => {
      const status = await getOk(sys.baseUrl, owner.user, `/clusters/${id}/status`);
      const list = await nodesOf(t, id, owner);
      return status.status === "active" && status.action === "replace_node" && !list.some((n) => n.id === victim.id) ? list : false;
    },
    { what: `node ${victim.id} of ${id} replaced by the repair`, timeoutMs: SETTLE_MS, intervalMs: 500 },
  );
  t.log(`repaired ${Date.now() - removedAt} ms after docker rm -f`);
  await assertMembers(t, id, 3, { owner, left: [victim.id] });
  t.deepEqual(repaired.find((n) => !nodes.some((m) => m.id === n.id))?.services, victim.services, "the new node holds the old one's services");
  const plans = await getOk<Array<{ action: string }>>(sys.baseUrl, owner.user, `/clusters/${id}/plans`);
  t.is(plans.filter((p) => p.action === "REPLACE_NODE").length, 1, "one repair");
  t.deepEqual(await tenantContainers(owner.name, { "corral.node": victim.id }), []);
  await allHealthy(t, id, owner);
});
