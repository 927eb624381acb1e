/**
 * The `lxd` provider end to end, through REST, on the real LXD of this machine (test/helpers/lxd.ts): the demo
 * template (kv, app, web; deploy/examples/docker-demo) on a provider of type `lxd` goes active on three system
 * containers with its processes running inside them (checked with `lxc exec`), stop/start and configure act on
 * them, delete removes every container; and a provisioner killed with SIGKILL mid-create leaves exactly one
 * container per node. The provisioners are processes of their own, loading the lxd provider the way a deployment
 * does (the default `provisioner.plugins`).
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buckets, kvKey, type ProvisionerRecord } from "@corral/contracts";
import { openBucket, readValue } from "@corral/shared";
import { api, type Caller } from "../helpers/api.js";
import { show } from "../helpers/assertions.js";
import { clusterProblems, openClusterState, type ClusterState } from "../helpers/cluster-state.js";
import { createCluster, getOk, waitForStatus } from "../helpers/clusters.js";
import { createDemoTenant, DEMO_SERVICES, type DemoTenant } from "../helpers/docker-demo.js";
import { eventually } from "../helpers/eventually.js";
import { ensureLxdForTests, lxcExec, releaseLxdForTests, removeTenantInstances, tenantInstances, type LxdForTests } from "../helpers/lxd.js";
import { createProcessSet, startProvisionerProcess, type ProcessSet, type ServiceProcess, runningTasksOf } from "../helpers/processes.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

interface Context {
  sys: TestSystem;
  lxd: LxdForTests;
  procs: ProcessSet;
  dir: string;
  state: ClusterState;
  provisioners: Map<string, ServiceProcess>;
  /** Task lines of the provisioners: which process runs which task now. */
  running: Map<string, Map<string, string>>;
  tenants: DemoTenant[];
}
type T = ExecutionContext<Context>;
const test = anyTest as TestFn<Context>;

const PROVISIONER_IDS = ["lxd-p0", "lxd-p1"] as const;
const PROVIDER = "local-lxd";

test.before(async (t) => {
  // Installing LXD and building its image may take minutes on a fresh machine.
  t.timeout(45 * 60_000);
  t.context.lxd = await ensureLxdForTests();
  t.context.procs = createProcessSet();
  t.context.tenants = [];
  t.context.provisioners = new Map();
  t.context.running = new Map();
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-lxd-e2e-"));
  t.context.sys = await startSystem({ clusters: 1, requestTimeoutMs: 10_000 });
  t.context.state = await openClusterState(t.context.sys.nc);
  for (const id of PROVISIONER_IDS) await startProvisioner(t.context, id);
});

test.after.always(async (t) => {
  // Processes first, so no task makes an instance after the clean-up.
  await t.context.procs?.stopAll();
  for (const tenant of t.context.tenants ?? []) await removeTenantInstances(tenant.name).catch(() => undefined);
  await t.context.sys?.stop();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
  await releaseLxdForTests();
});

const workDirOf = (c: Context, id: string) => join(c.dir, id);

/** Starts provisioner `id` at debug level, recording the tasks it is running from its log lines. */
async function startProvisioner(c: Context, id: string): Promise<ServiceProcess> {
  const { running, onLine } = runningTasksOf();
  c.running.set(id, running);
  const proc = await c.procs.start(() =>
    startProvisionerProcess({ natsUrl: c.sys.nats.url, id, capacity: 10, workDir: workDirOf(c, id), logLevel: "debug", onLine }),
  );
  c.provisioners.set(id, proc);
  return proc;
}

/** The demo tenant on a provider of type lxd: the helpers' network and pool, the LXD image in its image type. */
async function lxdTenant(t: T, prefix: string): Promise<DemoTenant> {
  const c = t.context;
  const tenant = await createDemoTenant(c.sys, prefix, {
    provider: { name: PROVIDER, providertype: "lxd", provisioner: c.lxd.providerFields },
    workDirs: PROVISIONER_IDS.map((id) => workDirOf(c, id)),
  });
  c.tenants.push(tenant);
  const image = await getOk<{ providermap: Record<string, Record<string, string>> }>(c.sys.baseUrl, tenant.admin, "/imagetypes/debian12");
  image.providermap[PROVIDER] = { image: c.lxd.image, sshuser: "root" };
  await call(t, tenant.admin, "PUT", "/imagetypes/debian12", image);
  // Workers on both provisioners, so either can take the other's tasks over.
  const registry = await openBucket(c.sys.nc, buckets.provisioners);
  await eventually(
    async () => {
      for (const id of PROVISIONER_IDS) {
        if (((await readValue<ProvisionerRecord>(registry, kvKey(id)))?.value.usage[tenant.name] ?? 0) === 0) return false;
      }
      return true;
    },
    { what: `workers of ${tenant.name} on both provisioners`, timeoutMs: 30_000, intervalMs: 100 },
  );
  return tenant;
}

async function call(t: T, caller: Caller, method: string, path: string, body?: unknown): Promise<void> {
  const res = await api(t.context.sys.baseUrl, method, path, { ...caller, ...(body !== undefined ? { body } : {}) });
  if (res.status !== 200) throw new Error(`${method} ${path}: ${show(res)}`);
}

async function settle(t: T, caller: Caller, id: string, status: "active" | "terminated"): Promise<void> {
  try {
    await waitForStatus(t.context.sys.baseUrl, caller, id, status, 600_000);
  } catch (err) {
    t.log(t.context.procs.dump());
    throw err;
  }
}

interface NodeView {
  id: string;
  services: string[];
  properties: { hostname: string; ipaddresses: Record<string, string> };
  results?: Record<string, unknown>;
}

async function nodesOf(t: T, caller: Caller, id: string): Promise<NodeView[]> {
  return (await getOk<{ nodes: NodeView[] }>(t.context.sys.baseUrl, caller, `/clusters/${id}`)).nodes;
}

/** The pid of a demo service in an instance, when that process is alive. */
async function pidOf(instance: string, service: string): Promise<number | undefined> {
  const out = await lxcExec(instance, `p=$(cat /run/corral-demo-${service}.pid 2>/dev/null) && kill -0 "$p" 2>/dev/null && echo "$p" || true`);
  return out.trim() ? Number(out.trim()) : undefined;
}

/** GET http://127.0.0.1:<port>/ inside an instance. */
async function httpInside(instance: string, port: number): Promise<any> {
  return JSON.parse(await lxcExec(instance, `python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:${port}/', timeout=5).read().decode())"`));
}

/**
 * The cluster is consistently active, each node has exactly one instance (the one its `providerid` names), the
 * tenant has no other, and kv, app and web run in theirs, the app having reached the store on the kv node by its
 * name. Answers the instance of each service.
 */
async function assertDemoRuns(t: T, tenant: DemoTenant, id: string): Promise<Record<(typeof DEMO_SERVICES)[number], string>> {
  t.deepEqual(await clusterProblems(t.context.state, id, "active"), []);
  const nodes = await nodesOf(t, tenant.user, id);
  t.is(nodes.length, 3);
  t.is((await tenantInstances(tenant.name, { "user.corral.cluster": id })).length, 3, "three instances of the cluster");
  t.is((await tenantInstances(tenant.name)).length, 3, "no other instance of the tenant");
  const stored = await t.context.state.cluster(id);
  const results = new Map((await t.context.state.nodes(stored!.value)).map((n) => [n.id, n.results]));
  const instanceOf = new Map<string, string>();
  for (const node of nodes) {
    const providerId = String(results.get(node.id)?.["providerid"]);
    t.deepEqual(await tenantInstances(tenant.name, { "user.corral.node": node.id }), [providerId], `node ${node.id}: one instance, its providerid`);
    t.is(node.properties.hostname, `${providerId}.lxd`, "the hostname is the instance's name in the bridge's domain");
    instanceOf.set(node.id, providerId);
  }
  const placed = {} as Record<(typeof DEMO_SERVICES)[number], string>;
  for (const service of DEMO_SERVICES) {
    const node = nodes.find((n) => n.services.includes(service));
    if (!node) throw new Error(`no node has ${service}`);
    placed[service] = instanceOf.get(node.id)!;
    t.truthy(await pidOf(placed[service], service), `${service} runs in instance ${placed[service]}`);
  }
  t.is(new Set(Object.values(placed)).size, 3, "kv, app and web are on three different instances");
  const kvHost = nodes.find((n) => n.services.includes("kv"))!.properties.hostname;
  t.is((await lxcExec(placed.app, "cat /var/lib/corral-demo/app-reached-store")).trim(), `${kvHost}:7000`, "the app reached the store by its name");
  const page = await httpInside(placed.web, 80);
  t.is(page.app.store, `${kvHost}:7000`);
  t.true(page.app.hits >= 1);
  return placed;
}

async function deleteAndAssertGone(t: T, tenant: DemoTenant, id: string): Promise<void> {
  await call(t, tenant.admin, "DELETE", `/clusters/${id}`);
  await settle(t, tenant.user, id, "terminated");
  t.deepEqual(await clusterProblems(t.context.state, id, "terminated"), []);
  t.deepEqual(await tenantInstances(tenant.name, { "user.corral.cluster": id }), [], "delete leaves no instance");
}

test.serial("lxd: the demo runs on three system containers; stop/start and configure act on its processes; delete removes them", async (t) => {
  t.timeout(900_000);
  const tenant = await lxdTenant(t, "lxd-e2e");
  const id = await createCluster(t.context.sys.baseUrl, tenant.user, { name: "demo", clusterTemplate: "demo3", numMachines: 3 });
  await settle(t, tenant.user, id, "active");
  const placed = await assertDemoRuns(t, tenant, id);
  const pids = async () => ({ kv: await pidOf(placed.kv, "kv"), app: await pidOf(placed.app, "app"), web: await pidOf(placed.web, "web") });
  const started = await pids();

  await call(t, tenant.user, "POST", `/clusters/${id}/services/stop`);
  await settle(t, tenant.user, id, "active");
  t.deepEqual(await pids(), { kv: undefined, app: undefined, web: undefined }, "stop ends every service process");

  await call(t, tenant.user, "POST", `/clusters/${id}/services/start`);
  await settle(t, tenant.user, id, "active");
  const restarted = await pids();
  for (const s of DEMO_SERVICES) {
    t.truthy(restarted[s], `${s} runs after start`);
    t.not(restarted[s], started[s], `${s} is a new process`);
  }

  const config = (await getOk<Record<string, any>>(t.context.sys.baseUrl, tenant.user, `/clusters/${id}/config`)) as Record<string, any>;
  await call(t, tenant.user, "PUT", `/clusters/${id}/config`, { config: { ...config, demo: { ...config["demo"], greeting: "bonjour" } }, restart: true });
  await settle(t, tenant.user, id, "active");
  t.is((await httpInside(placed.web, 80)).app.greeting, "bonjour", "configure reached the app's config and restarted it");
  t.not(await pidOf(placed.app, "app"), restarted.app);

  await deleteAndAssertGone(t, tenant, id);
});

test.serial("lxd: a provisioner killed mid-create; the other takes its tasks over, one container per node, the demo runs", async (t) => {
  t.timeout(900_000);
  const c = t.context;
  for (const pid of PROVISIONER_IDS) if (!c.provisioners.get(pid)?.isAlive()) await startProvisioner(c, pid);
  const tenant = await lxdTenant(t, "lxd-kill");
  const id = await createCluster(c.sys.baseUrl, tenant.user, { name: "crash", clusterTemplate: "demo3", numMachines: 3 });

  // The middle of the create: an instance of the cluster exists and a provisioner runs CREATE or CONFIRM of it.
  const victim = await eventually(
    async () => {
      if ((await tenantInstances(tenant.name, { "user.corral.cluster": id })).length === 0) return false;
      for (const [pid, running] of c.running) {
        const held = [...running].filter(([key, name]) => key.startsWith(`${id}-`) && (name === "CREATE" || name === "CONFIRM"));
        if (held.length > 0 && c.provisioners.get(pid)?.isAlive()) return { pid, held };
      }
      return false;
    },
    { what: `CREATE/CONFIRM of ${id} in flight with an instance made`, timeoutMs: 300_000, intervalMs: 20 },
  );
  const killed = await c.provisioners.get(victim.pid)!.kill("SIGKILL");
  t.is(killed.signal, "SIGKILL");
  const atKill = await tenantInstances(tenant.name, { "user.corral.cluster": id });
  t.log(`killed ${victim.pid} holding ${victim.held.map(([key, name]) => `${name} ${key}`).join(", ")} with ${atKill.length} instance(s) made`);

  await settle(t, tenant.user, id, "active");
  await assertDemoRuns(t, tenant, id);
  for (const name of atKill) t.true((await tenantInstances(tenant.name, { "user.corral.cluster": id })).includes(name), `instance ${name} made before the kill was kept`);
  await deleteAndAssertGone(t, tenant, id);
});
