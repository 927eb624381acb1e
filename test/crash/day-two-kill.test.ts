/**
 * Crash tests of day-two operations on real machines: a 3-node cluster of the peers catalog
 * (test/helpers/docker-peers.ts) on the `docker` provider grows by two nodes, then has a node replaced, while the
 * clusters service and two provisioners run as child processes; in each operation one of them is killed with
 * SIGKILL while a new node's CREATE, CONFIRM or BOOTSTRAP is in flight. The cluster must end active with exactly
 * the nodes it should have, one container each (the one its stored `providerid` names), every member listing every
 * node, the replaced node and its container gone, and its delete must leave nothing.
 *
 * Which provisioner runs which task is read from the provisioners' debug lines ("running task", "task done").
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import { join } from "node:path";
import type { NodeView } from "@corral/contracts";
import { api } from "../helpers/api.js";
import { show } from "../helpers/assertions.js";
import { clusterProblems } from "../helpers/cluster-state.js";
import { createCluster, getOk, waitForStatus } from "../helpers/clusters.js";
import { dumpOnFailure, startDockerCrashRig, stopDockerCrashRig, type DockerCrashRig } from "../helpers/docker-crash-rig.js";
import { tenantContainers, type DemoTenant } from "../helpers/docker-demo.js";
import { createPeersTenant, peersIn, PEERS_TEMPLATE } from "../helpers/docker-peers.js";
import { eventually } from "../helpers/eventually.js";
import { runningTasksOf, startProvisionerProcess, type ServiceProcess } from "../helpers/processes.js";

/** A provisioner child and the tasks it runs now (`<taskId>.<dispatch>` -> task name). */
interface ProvisionerChild {
  id: string;
  proc: ServiceProcess;
  running: Map<string, string>;
}

interface Context extends DockerCrashRig {
  provisioners: Map<string, ProvisionerChild>;
}
type T = ExecutionContext<Context>;
const test = anyTest as TestFn<Context>;

const PROVISIONER_IDS = ["d2-p0", "d2-p1"] as const;
/** The tasks that make and reach a new machine. */
const EARLY_TASKS = new Set(["CREATE", "CONFIRM", "BOOTSTRAP"]);
const SETTLE_MS = 240_000;

test.before(async (t) => {
  t.context.provisioners = new Map();
  await startDockerCrashRig(t.context, "corral-day-two-crash-");
  for (const id of PROVISIONER_IDS) await startProvisionerChild(t.context, id);
});

test.after.always((t) => stopDockerCrashRig(t.context));

/** Starts provisioner `id` at debug level (its task lines tell what it runs), with its own work directory. */
async function startProvisionerChild(c: Context, id: string): Promise<ProvisionerChild> {
  const { running, onLine } = runningTasksOf();
  const proc = await c.procs.start(() =>
    startProvisionerProcess({ natsUrl: c.sys.nats.url, id, capacity: 10, workDir: join(c.dir, id), logLevel: "debug", onLine }),
  );
  const child = { id, proc, running };
  c.provisioners.set(id, child);
  return child;
}

/** Starts again every provisioner that is not running. */
async function ensureProvisioners(c: Context): Promise<void> {
  for (const id of PROVISIONER_IDS) if (!c.provisioners.get(id)?.proc.isAlive()) await startProvisionerChild(c, id);
}

const settle = (t: T, tenant: DemoTenant, id: string, status: "active" | "terminated" = "active") =>
  dumpOnFailure(t, waitForStatus(t.context.sys.baseUrl, tenant.user, id, status, SETTLE_MS));

const nodesOf = async (t: T, tenant: DemoTenant, id: string): Promise<NodeView[]> =>
  (await getOk<{ nodes: NodeView[] }>(t.context.sys.baseUrl, tenant.user, `/clusters/${id}`)).nodes;

/** A tenant with the peers catalog and an active 3-node cluster. */
async function threeNodeCluster(t: T, prefix: string): Promise<{ tenant: DemoTenant; id: string }> {
  const tenant = await createPeersTenant(t.context.sys, prefix);
  t.context.tenants.push(tenant);
  const id = await createCluster(t.context.sys.baseUrl, tenant.user, { name: "crash", clusterTemplate: PEERS_TEMPLATE, numMachines: 3 });
  await settle(t, tenant, id);
  return { tenant, id };
}

/** Starts a job (`POST path` with `body`); answers its plan id. */
async function startJob(t: T, tenant: DemoTenant, path: string, body: unknown): Promise<string> {
  const res = await api(t.context.sys.baseUrl, "POST", path, { ...tenant.user, body });
  if (res.status !== 200) throw new Error(`POST ${path}: ${show(res)}`);
  return (res.body as { planId: string }).planId;
}

/**
 * Waits until a provisioner runs CREATE, CONFIRM or BOOTSTRAP of the plan while the cluster has more containers
 * than `before`: the middle of bringing new machines up. Answers that provisioner and its tasks.
 */
async function midNewMachines(t: T, tenant: DemoTenant, clusterId: string, planId: string, before: number) {
  return dumpOnFailure(
    t,
    eventually(
      async () => {
        if ((await tenantContainers(tenant.name, { "corral.cluster": clusterId })).length <= before) return false;
        for (const p of t.context.provisioners.values()) {
          if (!p.proc.isAlive()) continue;
          const held = [...p.running].filter(([key, name]) => key.startsWith(`${planId}-`) && EARLY_TASKS.has(name));
          if (held.length > 0) return { provisioner: p, held: held.map(([key, name]) => `${name} ${key}`) };
        }
        return false;
      },
      { what: `CREATE/CONFIRM/BOOTSTRAP of plan ${planId} in flight with a new container made`, timeoutMs: 120_000, intervalMs: 20 },
    ),
  );
}

/**
 * The cluster is consistently active with `count` nodes; each node has exactly one container, the one its stored
 * `providerid` names; the tenant has no other container; every member lists every node. `left`: nodes the last
 * plan took out of the cluster.
 */
async function assertExactlyOnContainers(t: T, tenant: DemoTenant, id: string, count: number, left: readonly string[] = []): Promise<NodeView[]> {
  const { state } = t.context;
  t.deepEqual(await clusterProblems(state, id, "active", { leftNodes: left }), []);
  const nodes = await nodesOf(t, tenant, id);
  t.is(nodes.length, count, `${count} nodes`);
  const stored = new Map((await state.nodes((await state.cluster(id))!.value)).map((n) => [n.id, n]));
  t.is((await tenantContainers(tenant.name)).length, count, "no container of the tenant but the nodes'");
  const hostnames = nodes.map((n) => String(n.properties["hostname"])).sort();
  for (const node of nodes) {
    const own = await tenantContainers(tenant.name, { "corral.node": node.id });
    t.deepEqual(own, [stored.get(node.id)?.results["providerid"]], `node ${node.id}: exactly one container, the one its providerid names`);
    if (own[0]) t.deepEqual(await peersIn(own[0]), hostnames, `node ${node.id}'s member lists every node`);
  }
  return nodes;
}

/** Deletes the cluster: it ends terminated and the tenant has no container left. */
async function deleteAndAssertGone(t: T, tenant: DemoTenant, id: string): Promise<void> {
  const res = await api(t.context.sys.baseUrl, "DELETE", `/clusters/${id}`, tenant.admin);
  t.is(res.status, 200, show(res));
  await settle(t, tenant, id, "terminated");
  t.deepEqual(await clusterProblems(t.context.state, id, "terminated"), []);
  t.deepEqual(await tenantContainers(tenant.name), [], "the delete leaves no container");
}

/** Kills a process with SIGKILL while new machines come up (`held`: what the provisioner runs), then starts it again. */
type Kill = (t: T, provisioner: ProvisionerChild, held: string[]) => Promise<void>;

const killProvisioner: Kill = async (t, provisioner, held) => {
  t.is((await provisioner.proc.kill("SIGKILL")).signal, "SIGKILL");
  t.log(`killed ${provisioner.id} holding ${held.join(", ")}`);
  await startProvisionerChild(t.context, provisioner.id);
};

const killClusters: Kill = async (t, provisioner, held) => {
  const c = t.context;
  t.is((await c.clusters.kill("SIGKILL")).signal, "SIGKILL");
  t.log(`killed the clusters service while ${provisioner.id} ran ${held.join(", ")}`);
  c.clusters = await c.procs.start(() => c.clusters.respawn());
};

/** Grows the cluster from 3 to 5 nodes, killing a process mid-way; the cluster ends with 5 nodes, one container each. */
async function growWithKill(t: T, tenant: DemoTenant, id: string, kill: Kill): Promise<void> {
  const planId = await startJob(t, tenant, `/clusters/${id}/nodes`, { numMachines: 2 });
  const { provisioner, held } = await midNewMachines(t, tenant, id, planId, 3);
  const killedAt = Date.now();
  await kill(t, provisioner, held);
  await settle(t, tenant, id);
  t.log(`grow: active ${Date.now() - killedAt} ms after the kill`);
  t.like(await getOk(t.context.sys.baseUrl, tenant.user, `/clusters/${id}/status`), { action: "add_nodes", actionstatus: "complete" });
  await assertExactlyOnContainers(t, tenant, id, 5);
}

/** Replaces a member node of the `count`-node cluster, killing a process mid-way; the old node and its container go. */
async function replaceWithKill(t: T, tenant: DemoTenant, id: string, count: number, kill: Kill): Promise<void> {
  const before = await nodesOf(t, tenant, id);
  const old = before.filter((n) => !n.services.includes("leader"))[0]!;
  const planId = await startJob(t, tenant, `/clusters/${id}/nodes/${old.id}/replace`, {});
  const { provisioner, held } = await midNewMachines(t, tenant, id, planId, count);
  const killedAt = Date.now();
  await kill(t, provisioner, held);
  await settle(t, tenant, id);
  t.log(`replace: active ${Date.now() - killedAt} ms after the kill`);
  t.like(await getOk(t.context.sys.baseUrl, tenant.user, `/clusters/${id}/status`), { action: "replace_node", actionstatus: "complete" });
  const nodes = await assertExactlyOnContainers(t, tenant, id, count, [old.id]);
  t.false(nodes.some((n) => n.id === old.id), "the replaced node left the cluster");
  t.is(nodes.length - before.filter((b) => nodes.some((n) => n.id === b.id)).length, 1, "one new node");
  t.deepEqual(await tenantContainers(tenant.name, { "corral.node": old.id }), [], "the old node's container is gone");
}

test.serial("crash - a provisioner killed mid-grow and mid-replace on docker: 5 nodes, one container each, nothing left behind", async (t) => {
  t.timeout(SETTLE_MS * 3);
  await ensureProvisioners(t.context);
  const { tenant, id } = await threeNodeCluster(t, "d2-prov");
  await growWithKill(t, tenant, id, killProvisioner);
  await replaceWithKill(t, tenant, id, 5, killProvisioner);
  await deleteAndAssertGone(t, tenant, id);
});

test.serial("crash - the clusters service killed mid-grow and mid-replace on docker: 5 nodes, one container each, nothing left behind", async (t) => {
  t.timeout(SETTLE_MS * 3);
  await ensureProvisioners(t.context);
  const { tenant, id } = await threeNodeCluster(t, "d2-clus");
  await growWithKill(t, tenant, id, killClusters);
  await replaceWithKill(t, tenant, id, 5, killClusters);
  await deleteAndAssertGone(t, tenant, id);
});
