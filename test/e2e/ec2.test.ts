/**
 * The `ec2` provider end to end, through REST, against the EC2 emulator (test/helpers/ec2-emulator), whose
 * instances are containers of the node image: the demo template (kv, app, web; deploy/examples/docker-demo) on a
 * provider of type `ec2` goes active on three instances with its processes running inside them, and its delete
 * terminates them and removes the cluster's key pair; a provisioner killed with SIGKILL while its RunInstances is
 * under way leaves exactly one instance per node (the CREATE run again sends the same ClientToken). The
 * provisioners are processes of their own, loading the provider the way a deployment does (the default
 * `provisioner.plugins`).
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buckets, kvKey, type ProvisionerRecord } from "@corral/contracts";
import { openBucket, readValue } from "@corral/shared";
import { ClusterKeys } from "@corral/provisioner/testing";
import { api, type Caller } from "../helpers/api.js";
import { show } from "../helpers/assertions.js";
import { clusterProblems, openClusterState, type ClusterState } from "../helpers/cluster-state.js";
import { createCluster, getOk, latestPlan, waitForStatus } from "../helpers/clusters.js";
import { createDemoTenant, DEMO_SERVICES, inContainer, type DemoTenant } from "../helpers/docker-demo.js";
import { ensureDockerForTests, removeTestContainers } from "../helpers/docker-hosts.js";
import { EMULATOR_AMI, startEc2Emulator, type Ec2Emulator, type EmulatedInstance } from "../helpers/ec2-emulator/index.js";
import { eventually } from "../helpers/eventually.js";
import { createProcessSet, startProvisionerProcess, type ProcessSet, type ServiceProcess, runningTasksOf } from "../helpers/processes.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

interface Context {
  sys: TestSystem;
  emulator: Ec2Emulator;
  emulatorLog: string[];
  procs: ProcessSet;
  dir: string;
  state: ClusterState;
  provisioners: Map<string, ServiceProcess>;
  /** Task lines of the provisioners: which process runs which task (`<taskId>.<dispatch>` -> task name) now. */
  running: Map<string, Map<string, string>>;
}
type T = ExecutionContext<Context>;
const test = anyTest as TestFn<Context>;

const PROVISIONER_IDS = ["ec2-p0", "ec2-p1"] as const;
const PROVIDER = "emulated-ec2";
const ACCESS_KEY_ID = "AKIAE2EEC2TESTKEY000";
const SECRET = "e2e/ec2/SecretAccessKey/never-shown-0000";

test.before(async (t) => {
  t.timeout(20 * 60_000);
  await ensureDockerForTests();
  t.context.emulatorLog = [];
  t.context.emulator = await startEc2Emulator({ log: (line) => t.context.emulatorLog.push(line) });
  // Read by the provider in the provisioner processes (they inherit this environment): quick polls, a bounded CONFIRM.
  Object.assign(process.env, { CORRAL_EC2_POLL_MS: "200", CORRAL_EC2_MAX_POLL_MS: "1000", CORRAL_EC2_CONFIRM_TIMEOUT_MS: "180000" });
  t.context.procs = createProcessSet();
  t.context.provisioners = new Map();
  t.context.running = new Map();
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-ec2-e2e-"));
  t.context.sys = await startSystem({ clusters: 1, requestTimeoutMs: 10_000 });
  t.context.state = await openClusterState(t.context.sys.nc);
  for (const id of PROVISIONER_IDS) await startProvisioner(t.context, id);
});

test.after.always(async (t) => {
  // Processes first, so no task launches an instance after the emulator stopped.
  await t.context.procs?.stopAll();
  await t.context.emulator?.stop();
  await t.context.sys?.stop();
  await removeTestContainers();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
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

async function call(t: T, caller: Caller, method: string, path: string, body?: unknown): Promise<void> {
  const res = await api(t.context.sys.baseUrl, method, path, { ...caller, ...(body !== undefined ? { body } : {}) });
  if (res.status !== 200) throw new Error(`${method} ${path}: ${show(res)}`);
}

/** The demo tenant on a provider of type ec2 at the emulator: instance types as flavors, the emulator's AMI. */
async function ec2Tenant(t: T, prefix: string): Promise<DemoTenant> {
  const c = t.context;
  const tenant = await createDemoTenant(c.sys, prefix, {
    provider: {
      name: PROVIDER,
      providertype: "ec2",
      provisioner: { region: c.emulator.region, endpoint: c.emulator.url, access_key_id: ACCESS_KEY_ID, secret_access_key: SECRET },
    },
    workDirs: PROVISIONER_IDS.map((id) => workDirOf(c, id)),
  });
  for (const [hardware, flavor] of [["small", "t3.micro"], ["large", "t3.large"]] as const) {
    const type = await getOk<{ providermap: Record<string, Record<string, string>> }>(c.sys.baseUrl, tenant.admin, `/hardwaretypes/${hardware}`);
    type.providermap[PROVIDER] = { flavor };
    await call(t, tenant.admin, "PUT", `/hardwaretypes/${hardware}`, type);
  }
  // No sshuser: the provider's default login (admin, with sudo) is used.
  const image = await getOk<{ providermap: Record<string, Record<string, string>> }>(c.sys.baseUrl, tenant.admin, "/imagetypes/debian12");
  image.providermap[PROVIDER] = { image: EMULATOR_AMI };
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

async function settle(t: T, caller: Caller, id: string, status: "active" | "terminated"): Promise<void> {
  try {
    await waitForStatus(t.context.sys.baseUrl, caller, id, status, 600_000);
  } catch (err) {
    t.log(t.context.procs.dump());
    t.log(t.context.emulatorLog.slice(-60).join("\n"));
    throw err;
  }
}

interface NodeView {
  id: string;
  services: string[];
  properties: { hostname: string; ipaddresses: Record<string, string> };
}

const nodesOf = async (t: T, caller: Caller, id: string) => (await getOk<{ nodes: NodeView[] }>(t.context.sys.baseUrl, caller, `/clusters/${id}`)).nodes;

/** The emulator's instances of a tenant's cluster (or node), terminated ones included. */
function instancesOf(c: Context, tenant: string, tags: Record<string, string>): EmulatedInstance[] {
  return c.emulator.instances().filter((i) => i.tags.get("corral:tenant") === tenant && Object.entries(tags).every(([k, v]) => i.tags.get(k) === v));
}
const isLive = (i: EmulatedInstance) => i.state !== "terminated" && i.state !== "shutting-down";

/** The pid of a demo service in an instance, when that process is alive. */
async function pidOf(instance: EmulatedInstance, service: string): Promise<number | undefined> {
  const out = await inContainer(instance.containerId!, `p=$(cat /run/corral-demo-${service}.pid 2>/dev/null) && kill -0 "$p" 2>/dev/null && echo "$p" || true`);
  return out.trim() ? Number(out.trim()) : undefined;
}

/**
 * The cluster is consistently active on three running instances, one per node (the one its `providerid` names, ever
 * launched for it), none other of the tenant; kv, app and web run in theirs, the app having reached the store on
 * the kv node by its private DNS name.
 */
async function assertDemoRuns(t: T, tenant: DemoTenant, id: string): Promise<void> {
  const c = t.context;
  t.deepEqual(await clusterProblems(c.state, id, "active"), []);
  const nodes = await nodesOf(t, tenant.user, id);
  t.is(nodes.length, 3);
  const stored = await c.state.cluster(id);
  const results = new Map((await c.state.nodes(stored!.value)).map((n) => [n.id, n.results]));
  t.is(instancesOf(c, tenant.name, {}).filter(isLive).length, 3, "three live instances of the tenant");
  const instanceOf = new Map<string, EmulatedInstance>();
  for (const node of nodes) {
    const providerId = String(results.get(node.id)?.["providerid"]);
    const launched = instancesOf(c, tenant.name, { "corral:node": node.id });
    t.deepEqual(launched.map((i) => i.id), [providerId], `node ${node.id}: exactly one instance ever launched, its providerid`);
    const instance = launched[0]!;
    t.is(instance.state, "running");
    t.is(node.properties.hostname, instance.privateDnsName);
    t.deepEqual(node.properties.ipaddresses, { access_v4: instance.privateIp, bind_v4: instance.privateIp });
    t.is(results.get(node.id)?.["ssh_host_key_trust"], "console-output");
    instanceOf.set(node.id, instance);
  }
  const placed = new Map<string, EmulatedInstance>();
  for (const service of DEMO_SERVICES) {
    const node = nodes.find((n) => n.services.includes(service));
    if (!node) throw new Error(`no node has ${service}`);
    placed.set(service, instanceOf.get(node.id)!);
    t.truthy(await pidOf(instanceOf.get(node.id)!, service), `${service} runs in instance ${instanceOf.get(node.id)!.id}`);
  }
  t.is(new Set([...placed.values()].map((i) => i.id)).size, 3, "kv, app and web are on three instances");
  const kvHost = nodes.find((n) => n.services.includes("kv"))!.properties.hostname;
  t.is((await inContainer(placed.get("app")!.containerId!, "cat /var/lib/corral-demo/app-reached-store")).trim(), `${kvHost}:7000`, "the app reached the store by name");
  const page = JSON.parse(
    await inContainer(placed.get("web")!.containerId!, `python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:80/', timeout=5).read().decode())"`),
  );
  t.is(page.app.store, `${kvHost}:7000`);
}

/** Deletes the cluster: it ends terminated, its instances are terminated, its key pair and cluster key are gone. */
async function deleteAndAssertGone(t: T, tenant: DemoTenant, id: string): Promise<void> {
  const c = t.context;
  const pairs = new Set(instancesOf(c, tenant.name, { "corral:cluster": id }).map((i) => i.keyName));
  t.is(pairs.size, 1, "the cluster's instances share one key pair");
  await call(t, tenant.admin, "DELETE", `/clusters/${id}`);
  await settle(t, tenant.user, id, "terminated");
  t.deepEqual(await clusterProblems(c.state, id, "terminated"), []);
  await eventually(() => instancesOf(c, tenant.name, { "corral:cluster": id }).every((i) => i.state === "terminated"), {
    what: "every instance of the cluster terminated",
    timeoutMs: 30_000,
  });
  const pairNames = new Set(c.emulator.keyPairs().map((k) => k.name));
  for (const name of pairs) t.false(pairNames.has(name!), `key pair ${name} removed`);
  t.is(await new ClusterKeys(c.sys.nc).read(tenant.name, id), undefined, "the cluster key is removed");
}

test.serial("ec2: the demo runs on three emulated instances; delete terminates them and removes the key pair", async (t) => {
  t.timeout(900_000);
  const c = t.context;
  const tenant = await ec2Tenant(t, "ec2-e2e");
  const id = await createCluster(c.sys.baseUrl, tenant.user, { name: "demo", clusterTemplate: "demo3", numMachines: 3 });
  await settle(t, tenant.user, id, "active");
  await assertDemoRuns(t, tenant, id);
  const launches = c.emulator.calls("RunInstances").filter((call) => Object.values(call.params).includes(id));
  t.is(launches.length, 3);
  for (const launch of launches) t.is(launch.accessKeyId, ACCESS_KEY_ID, "signed with the provider's credentials");
  await deleteAndAssertGone(t, tenant, id);

  for (const p of c.provisioners.values()) {
    const output = p.output().join("\n");
    t.false(output.includes(SECRET), "no provisioner log line holds the secret key");
  }
});

test.serial("ec2: a provisioner killed mid-RunInstances; the CREATE run again gets the same instance, one per node", async (t) => {
  t.timeout(900_000);
  const c = t.context;
  for (const pid of PROVISIONER_IDS) if (!c.provisioners.get(pid)?.isAlive()) await startProvisioner(c, pid);
  const tenant = await ec2Tenant(t, "ec2-kill");
  // EC2 lists a new instance only a while after its launch: the CREATE run again cannot find it by its tags and
  // must rely on the ClientToken.
  c.emulator.configure({ listingLagMs: 40_000 });
  const hold = c.emulator.holdReply("RunInstances");
  try {
    const id = await createCluster(c.sys.baseUrl, tenant.user, { name: "crash", clusterTemplate: "demo3", numMachines: 3 });
    const held = await hold.arrived;
    const nodeId = held.params[Object.keys(held.params).find((k) => held.params[k] === "corral:node")!.replace(/Key$/, "Value")]!;
    const createTask = (await latestPlan(c.sys.baseUrl, tenant.user, id)).stages.flat().find((task) => task.taskName === "CREATE" && task.nodeId === nodeId);
    const victim = await eventually(
      () => [...c.running].find(([pid, running]) => c.provisioners.get(pid)?.isAlive() && [...running.keys()].some((key) => key.startsWith(`${createTask?.id}.`)))?.[0] ?? false,
      { what: `the provisioner running CREATE of node ${nodeId}`, timeoutMs: 10_000, intervalMs: 20 },
    );
    t.is((await c.provisioners.get(victim)!.kill("SIGKILL")).signal, "SIGKILL");
    hold.release();
    t.log(`killed ${victim} while its RunInstances for node ${nodeId} was under way`);

    await settle(t, tenant.user, id, "active");
    const launches = c.emulator.calls("RunInstances").filter((call) => Object.values(call.params).includes(nodeId));
    t.true(launches.length >= 2, "the CREATE ran again and launched again");
    t.true(
      launches.every((l) => l.params["ClientToken"] === held.params["ClientToken"]),
      "with the ClientToken of the dispatch the killed provisioner ran",
    );
    c.emulator.configure({ listingLagMs: 0 });
    await assertDemoRuns(t, tenant, id);
    await deleteAndAssertGone(t, tenant, id);
  } finally {
    hold.release();
    c.emulator.configure({ listingLagMs: 0 });
  }
});
