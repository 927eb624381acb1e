/**
 * Crash tests on real machines: the demo template (kv, app, web on three nodes; deploy/examples/docker-demo) is
 * created on containers of the `docker` provider while the clusters service and two provisioners run as child
 * processes, and one of them is killed with SIGKILL while CREATE, CONFIRM or BOOTSTRAP tasks of the cluster are in
 * flight. The cluster must still become active with exactly one container per node (the one its stored
 * `providerid` names), the demo services running in them, and its delete must leave no container behind.
 *
 * Which provisioner runs which task is read from the provisioners' own debug lines ("running task", "task done").
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import { join } from "node:path";
import { buckets, kvKey, type ProvisionerRecord } from "@corral/contracts";
import { openBucket, readValue } from "@corral/shared";
import { api } from "../helpers/api.js";
import { show } from "../helpers/assertions.js";
import { clusterProblems, type ClusterNode } from "../helpers/cluster-state.js";
import { createCluster, waitForStatus, type StatusBody } from "../helpers/clusters.js";
import { dumpOnFailure, startDockerCrashRig, stopDockerCrashRig, type DockerCrashRig } from "../helpers/docker-crash-rig.js";
import {
  DEMO_SERVICES,
  createDemoTenant,
  docker,
  inContainer,
  tenantContainers,
  type DemoTenant,
} from "../helpers/docker-demo.js";
import { eventually } from "../helpers/eventually.js";
import { startProvisionerProcess, type ServiceProcess } from "../helpers/processes.js";

/** One provisioner process; `instance` tells a restarted process (same id) from the one it replaced. */
interface ProvisionerChild {
  id: string;
  instance: string;
  proc: ServiceProcess;
}

/** A task line of a provisioner's log. */
interface TaskEvent {
  instance: string;
  what: "running" | "done" | "had-result";
  taskId: string;
  dispatch: number;
  taskName: string;
  at: number;
}

/** A provisioner's `docker: node container started` line: CREATE made the container, or adopted one it found. */
interface ContainerStart {
  instance: string;
  nodeId: string;
  container: string;
  how: string;
}

interface Context extends DockerCrashRig {
  provisioners: Map<string, ProvisionerChild>;
  events: TaskEvent[];
  starts: ContainerStart[];
}
type T = ExecutionContext<Context>;
const test = anyTest as TestFn<Context>;

const PROVISIONER_IDS = ["dk-p0", "dk-p1"] as const;
/** The tasks of a create that make and reach the machines. */
const EARLY_TASKS = new Set(["CREATE", "CONFIRM", "BOOTSTRAP"]);
const TASK_MESSAGES: Record<string, TaskEvent["what"]> = {
  "running task": "running",
  "task done": "done",
  "task already has a result; acking without running it": "had-result",
};

test.before(async (t) => {
  t.context.events = [];
  t.context.starts = [];
  t.context.provisioners = new Map();
  await startDockerCrashRig(t.context, "corral-docker-crash-");
  for (const id of PROVISIONER_IDS) await startProvisionerChild(t.context, id);
});

test.after.always((t) => stopDockerCrashRig(t.context));

const workDirOf = (c: Context, id: string) => join(c.dir, id);

/** Records the task and container lines of a provisioner's log. */
function record(c: Context, instance: string, line: string): void {
  if (!line.startsWith("{")) return;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return;
  }
  const task = taskEvent(instance, parsed);
  if (task) c.events.push(task);
  if (parsed["msg"] === "docker: node container started") {
    c.starts.push({ instance, nodeId: String(parsed["nodeId"]), container: String(parsed["container"]), how: String(parsed["how"]) });
  }
}

function taskEvent(instance: string, parsed: Record<string, unknown>): TaskEvent | undefined {
  const what = TASK_MESSAGES[String(parsed["msg"])];
  if (!what || typeof parsed["taskId"] !== "string") return undefined;
  return {
    instance,
    what,
    taskId: parsed["taskId"],
    dispatch: Number(parsed["dispatch"]),
    taskName: String(parsed["taskName"]),
    at: Date.parse(String(parsed["time"])),
  };
}

let instances = 0;
/** Starts provisioner `id` (at debug level: its task lines are recorded) with its own work directory. */
async function startProvisionerChild(c: Context, id: string): Promise<ProvisionerChild> {
  const instance = `${id}#${++instances}`;
  const proc = await c.procs.start(() =>
    startProvisionerProcess({
      natsUrl: c.sys.nats.url,
      id,
      capacity: 10,
      workDir: workDirOf(c, id),
      logLevel: "debug",
      onLine: (line) => record(c, instance, line),
    }),
  );
  const child = { id, instance, proc };
  c.provisioners.set(id, child);
  return child;
}

/** Starts again every provisioner that is not running. */
async function ensureProvisioners(c: Context): Promise<void> {
  for (const id of PROVISIONER_IDS) if (!c.provisioners.get(id)?.proc.isAlive()) await startProvisionerChild(c, id);
}

/** A demo tenant whose workers are spread over both provisioners, the script synced to both work directories. */
async function demoTenant(t: T, prefix: string): Promise<DemoTenant> {
  const c = t.context;
  const tenant = await createDemoTenant(c.sys, prefix, { workDirs: PROVISIONER_IDS.map((id) => workDirOf(c, id)) });
  c.tenants.push(tenant);
  const registry = await openBucket(c.sys.nc, buckets.provisioners);
  const spread = await eventually(
    async () => {
      const usage: Record<string, number> = {};
      for (const id of PROVISIONER_IDS) usage[id] = (await readValue<ProvisionerRecord>(registry, kvKey(id)))?.value.usage[tenant.name] ?? 0;
      return Object.values(usage).every((n) => n > 0) ? usage : false;
    },
    { what: `workers of ${tenant.name} on both provisioners`, timeoutMs: 20_000, intervalMs: 100 },
  );
  t.log(`tenant ${tenant.name}: workers ${JSON.stringify(spread)}`);
  return tenant;
}

/** Tasks of the cluster a provisioner instance has started and not finished. */
function inFlight(c: Context, instance: string, clusterId: string): TaskEvent[] {
  const open = new Map<string, TaskEvent>();
  for (const e of c.events) {
    if (e.instance !== instance || !e.taskId.startsWith(`${clusterId}-`)) continue;
    const key = `${e.taskId}.${e.dispatch}`;
    if (e.what === "running") open.set(key, e);
    else open.delete(key);
  }
  return [...open.values()];
}

const describeTasks = (tasks: TaskEvent[]) => tasks.map((e) => `${e.taskName} ${e.taskId}.${e.dispatch}`).join(", ");

/**
 * Waits for the middle of the create: a container of the cluster exists and a provisioner runs CREATE, CONFIRM or
 * BOOTSTRAP tasks of it. Answers that provisioner, those tasks and the number of containers.
 */
async function midCreate(t: T, tenant: DemoTenant, clusterId: string) {
  const c = t.context;
  return dumpOnFailure(
    t,
    eventually(
      async () => {
        const containers = (await tenantContainers(tenant.name, { "corral.cluster": clusterId })).length;
        if (containers === 0) return false;
        for (const p of c.provisioners.values()) {
          if (!p.proc.isAlive()) continue;
          const held = inFlight(c, p.instance, clusterId).filter((e) => EARLY_TASKS.has(e.taskName));
          if (held.length > 0) return { provisioner: p, held, containers };
        }
        return false;
      },
      { what: `CREATE/CONFIRM/BOOTSTRAP of ${clusterId} in flight with a container made`, timeoutMs: 120_000, intervalMs: 20 },
    ),
  );
}

async function settle(t: T, tenant: DemoTenant, id: string, status: "active" | "terminated"): Promise<StatusBody> {
  return dumpOnFailure(t, waitForStatus(t.context.sys.baseUrl, tenant.user, id, status, 240_000));
}

/** The pid of a demo service in a container, when that process is alive. */
async function pidOf(container: string, service: string): Promise<number | undefined> {
  const out = await inContainer(container, `p=$(cat /run/corral-demo-${service}.pid 2>/dev/null) && kill -0 "$p" 2>/dev/null && echo "$p" || true`);
  return out.trim() ? Number(out.trim()) : undefined;
}

/**
 * The cluster is consistently active (every task complete once in the stored state), each node has exactly one
 * container, the one its `providerid` names, the tenant has no other, and kv, app and web run in theirs.
 */
async function assertActiveOnContainers(t: T, tenant: DemoTenant, id: string, status: StatusBody): Promise<ClusterNode[]> {
  const { state } = t.context;
  t.is(status.stepscompleted, status.stepstotal);
  t.deepEqual(await clusterProblems(state, id, "active"), []);
  const cluster = (await state.cluster(id))?.value;
  if (!cluster) throw new Error(`cluster ${id} is not stored`);
  const nodes = await state.nodes(cluster);
  t.is(nodes.length, 3);
  t.is((await tenantContainers(tenant.name, { "corral.cluster": id })).length, 3, "three containers labelled with the cluster");
  t.is((await tenantContainers(tenant.name)).length, 3, "no other container of the tenant");
  for (const node of nodes) {
    t.deepEqual(
      await tenantContainers(tenant.name, { "corral.node": node.id }),
      [node.results["providerid"]],
      `node ${node.id}: exactly one container, the one its providerid names`,
    );
  }
  const containerOf = new Map<string, string>();
  for (const service of DEMO_SERVICES) {
    const node = nodes.find((n) => n.services.includes(service));
    if (!node) {
      t.fail(`no node has ${service}`);
      continue;
    }
    const container = String(node.results["providerid"]);
    containerOf.set(service, container);
    t.truthy(await pidOf(container, service), `${service} runs in the container of node ${node.id}`);
  }
  const kvHost = String(nodes.find((n) => n.services.includes("kv"))?.properties["hostname"]);
  const appContainer = containerOf.get("app");
  if (appContainer) {
    t.is((await inContainer(appContainer, "cat /var/lib/corral-demo/app-reached-store")).trim(), `${kvHost}:7000`, "the app reached the store");
  }
  return nodes;
}

/** Deletes the cluster: it ends terminated, and none of its containers is left. */
async function deleteAndAssertGone(t: T, tenant: DemoTenant, id: string): Promise<number> {
  const started = Date.now();
  const res = await api(t.context.sys.baseUrl, "DELETE", `/clusters/${id}`, tenant.admin);
  t.is(res.status, 200, show(res));
  await settle(t, tenant, id, "terminated");
  t.deepEqual(await clusterProblems(t.context.state, id, "terminated"), []);
  t.deepEqual(await tenantContainers(tenant.name, { "corral.cluster": id }), [], "the delete leaves no container");
  return Date.now() - started;
}

/** The cluster's containers by node (`corral.node` -> container ids). */
async function containersByNode(tenant: DemoTenant, clusterId: string): Promise<Map<string, string[]>> {
  const filters = ["--filter", `label=corral.tenant=${tenant.name}`, "--filter", `label=corral.cluster=${clusterId}`];
  const listing = await docker(["ps", "-a", "--no-trunc", ...filters, "--format", '{{.ID}} {{.Label "corral.node"}}']);
  const out = new Map<string, string[]>();
  for (const [container = "", node = ""] of listing.split("\n").filter(Boolean).map((l) => l.split(" "))) {
    out.set(node, [...(out.get(node) ?? []), container]);
  }
  return out;
}

/** When each kind of task of the cluster ran, relative to `since` (s): `CREATE 14.4-15.1 CONFIRM ...`. */
function timeline(c: Context, clusterId: string, since: number): string {
  const spans = new Map<string, { from: number; to: number }>();
  for (const e of c.events) {
    if (!e.taskId.startsWith(`${clusterId}-`)) continue;
    const span = spans.get(e.taskName) ?? { from: e.at, to: e.at };
    spans.set(e.taskName, { from: Math.min(span.from, e.at), to: Math.max(span.to, e.at) });
  }
  const s = (ms: number) => ((ms - since) / 1000).toFixed(1);
  return [...spans].map(([name, { from, to }]) => `${name} ${s(from)}..${s(to)}`).join(" ");
}

/** Per task id of the cluster, how many times a provisioner started running it. */
function runsByTask(c: Context, clusterId: string): Map<string, number> {
  const runs = new Map<string, number>();
  for (const e of c.events) {
    if (e.what === "running" && e.taskId.startsWith(`${clusterId}-`)) runs.set(e.taskId, (runs.get(e.taskId) ?? 0) + 1);
  }
  return runs;
}

test.serial("crash - a provisioner killed mid-create on docker: the other takes its tasks over, one container per node, the demo runs", async (t) => {
  t.timeout(300_000);
  const c = t.context;
  await ensureProvisioners(c);
  const tenant = await demoTenant(t, "dk-prov");
  const createdAt = Date.now();
  const id = await createCluster(c.sys.baseUrl, tenant.user, { name: "crash", clusterTemplate: "demo3", numMachines: 3 });

  const { provisioner: victim, held, containers } = await midCreate(t, tenant, id);
  const killedAt = Date.now();
  t.is((await victim.proc.kill("SIGKILL")).signal, "SIGKILL");
  const atKill = await containersByNode(tenant, id);
  t.log(`+${killedAt - createdAt} ms: killed ${victim.id} with ${containers} container(s) made, holding ${describeTasks(held)}`);
  const survivor = [...c.provisioners.values()].find((p) => p.id !== victim.id);
  if (!survivor) throw new Error("no other provisioner");

  // Each task the victim held is run again by the survivor (or found done, when its result was stored in time).
  const takenOver = await dumpOnFailure(
    t,
    eventually(
      () => {
        const found = held.map((h) => c.events.find((e) => e.instance === survivor.instance && e.taskId === h.taskId && e.what !== "done"));
        return found.every((e) => e !== undefined) ? (found as TaskEvent[]) : false;
      },
      { what: `${survivor.id} taking over ${describeTasks(held)}`, timeoutMs: 90_000, intervalMs: 100 },
    ),
  );
  for (const e of takenOver) t.log(`${e.taskName} ${e.taskId}: ${e.what} on ${survivor.id} at +${e.at - killedAt} ms after the kill`);

  const status = await settle(t, tenant, id, "active");
  const activeAt = Date.now();
  t.log(`active at +${activeAt - createdAt} ms (${activeAt - killedAt} ms after the kill); tasks (s after the kill): ${timeline(c, id, killedAt)}`);
  const nodes = await assertActiveOnContainers(t, tenant, id, status);
  // A container made before the kill is the node's container now: the CREATE run again adopted it.
  for (const node of nodes) {
    const before = atKill.get(node.id) ?? [];
    const started = c.starts.filter((s) => s.nodeId === node.id && s.instance === survivor.instance);
    t.log(`node ${node.id}: ${before.length ? `container ${before[0]?.slice(0, 12)} at the kill` : "no container at the kill"}; ${survivor.id}: ${started.map((s) => `${s.how} ${s.container.slice(0, 12)}`).join(", ") || "-"}`);
    if (before.length === 0) continue;
    t.deepEqual(before, [node.results["providerid"]], `node ${node.id} kept the container made before the kill`);
    const create = node.actions.find((a) => a.action === "CREATE");
    if (held.some((h) => h.taskName === "CREATE" && h.taskId === create?.taskId)) {
      t.deepEqual(started.map((s) => [s.how, s.container]), [["adopted", before[0]]], `${survivor.id} adopted node ${node.id}'s container`);
    }
  }
  // Only the tasks the victim held ran twice.
  const heldIds = new Set(held.map((h) => h.taskId));
  for (const [taskId, n] of runsByTask(c, id)) if (!heldIds.has(taskId)) t.is(n, 1, `task ${taskId} ran ${n} times`);

  t.log(`deleted in ${await deleteAndAssertGone(t, tenant, id)} ms`);
});

test.serial("crash - the clusters service killed mid-create on docker and restarted: one container per node, the demo runs", async (t) => {
  t.timeout(300_000);
  const c = t.context;
  await ensureProvisioners(c);
  const tenant = await demoTenant(t, "dk-clus");
  const createdAt = Date.now();
  const id = await createCluster(c.sys.baseUrl, tenant.user, { name: "crash", clusterTemplate: "demo3", numMachines: 3 });

  const { provisioner, held, containers } = await midCreate(t, tenant, id);
  const killedAt = Date.now();
  t.is((await c.clusters.kill("SIGKILL")).signal, "SIGKILL");
  t.log(`+${killedAt - createdAt} ms: killed the clusters service with ${containers} container(s) made, ${provisioner.id} running ${describeTasks(held)}`);
  c.clusters = await c.procs.start(() => c.clusters.respawn());
  t.log(`clusters service running again ${Date.now() - killedAt} ms after the kill`);

  const status = await settle(t, tenant, id, "active");
  const activeAt = Date.now();
  t.log(`active at +${activeAt - createdAt} ms (${activeAt - killedAt} ms after the kill); tasks (s after the kill): ${timeline(c, id, killedAt)}`);
  await assertActiveOnContainers(t, tenant, id, status);
  // No provisioner died: every task of the create ran exactly once.
  const runs = runsByTask(c, id);
  t.is(runs.size, status.stepstotal, "every task of the create ran");
  for (const [taskId, n] of runs) t.is(n, 1, `task ${taskId} ran ${n} times`);

  t.log(`deleted in ${await deleteAndAssertGone(t, tenant, id)} ms`);
});
