/**
 * Real machines end to end, through REST: the demo template (kv, app, web; deploy/examples/docker-demo) on
 * containers made by the `docker` provider and on sshd hosts of a `hostpool`. Every check looks inside the
 * machines (docker exec): processes run, the app reached the store on another node, stop/start/restart and
 * configure change the processes, add-services lands where the layout says, delete leaves nothing behind.
 */
import type { ExecutionContext } from "ava";
import { api, type Caller } from "../helpers/api.js";
import { show } from "../helpers/assertions.js";
import { createCluster, getOk, waitForStatus } from "../helpers/clusters.js";
import { createDemoTenant, docker, inContainer, nodeContainer, removeTenantContainers, tenantContainers, type DemoTenant } from "../helpers/docker-demo.js";
import { createTestNetwork, ensureDockerForTests, removeTestContainers, startSshHost, type SshHost } from "../helpers/docker-hosts.js";
import { eventually } from "../helpers/eventually.js";
import { testWithSystem, type SystemContext } from "../helpers/system-test.js";
import { generateSshKeyPair, sshKeyFile } from "@corral/provisioner/testing";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";

const test = testWithSystem({ clusters: 1, provisioners: 1, reconcileIntervalMs: 1000 });
const tenants: DemoTenant[] = [];
const hosts: SshHost[] = [];

test.before(async () => {
  await ensureDockerForTests();
});
test.after.always(async () => {
  for (const t of tenants) await removeTenantContainers(t.name, t.network);
  for (const h of hosts) await h.stop();
  await removeTestContainers();
});

type T = ExecutionContext<SystemContext>;

interface NodeView {
  id: string;
  services: string[];
  properties: { hostname: string; ipaddresses: Record<string, string> };
  actions: Array<{ action: string; service: string; status: string; stdout?: string; stderr?: string }>;
}

async function nodes(t: T, caller: Caller, id: string): Promise<NodeView[]> {
  return (await getOk<{ nodes: NodeView[] }>(t.context.sys.baseUrl, caller, `/clusters/${id}`)).nodes;
}

async function call(t: T, caller: Caller, method: string, path: string, body?: unknown): Promise<void> {
  const res = await api(t.context.sys.baseUrl, method, path, { ...caller, ...(body !== undefined ? { body } : {}) });
  if (res.status !== 200) throw new Error(`${method} ${path}: ${show(res)}`);
}

async function settle(t: T, caller: Caller, id: string, status: "active" | "terminated" | "incomplete" = "active") {
  await waitForStatus(t.context.sys.baseUrl, caller, id, status, 240_000);
}

/** Where each demo service runs: service -> its node. */
function byService(list: NodeView[]): Map<string, NodeView> {
  const out = new Map<string, NodeView>();
  for (const n of list) for (const s of n.services) out.set(s, n);
  return out;
}

/** The pid of a demo service in its container, if that process is alive. */
async function pidOf(container: string, service: string): Promise<number | undefined> {
  const out = await inContainer(container, `p=$(cat /run/corral-demo-${service}.pid 2>/dev/null) && kill -0 "$p" 2>/dev/null && echo "$p" || true`);
  return out.trim() ? Number(out.trim()) : undefined;
}

/** GET http://127.0.0.1:<port>/ from inside a container. */
async function httpInside(container: string, port: number): Promise<any> {
  const out = await inContainer(container, `python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:${port}/', timeout=5).read().decode())"`);
  return JSON.parse(out);
}

/** The demo's three services run, each on its own node, and the app reached the store on the kv node. */
async function assertDemoRuns(t: T, list: NodeView[], containerOf: (n: NodeView) => Promise<string>) {
  const placed = byService(list);
  const kv = placed.get("kv")!;
  const app = placed.get("app")!;
  const web = placed.get("web")!;
  t.is(new Set([kv.id, app.id, web.id]).size, 3, "kv, app and web are on three different nodes");
  const [kvC, appC, webC] = await Promise.all([containerOf(kv), containerOf(app), containerOf(web)]);
  for (const [c, s] of [[kvC, "kv"], [appC, "app"], [webC, "web"]] as const) t.truthy(await pidOf(c, s), `${s} runs`);
  const reached = (await inContainer(appC, "cat /var/lib/corral-demo/app-reached-store")).trim();
  t.is(reached, `${kv.properties.hostname}:7000`, "the app's config named the kv node (macro %host.service.kv% expanded)");
  const kvLog = await inContainer(kvC, "cat /var/log/corral-demo-kv.log");
  t.true(kvLog.includes(`SET app=${(await inContainer(appC, "hostname")).trim()} from ${app.properties.ipaddresses["access_v4"]}`), kvLog);
  const page = await httpInside(webC, 80);
  t.is(page.app.store, `${kv.properties.hostname}:7000`);
  t.true(page.app.hits >= 1);
  return { kv, app, web, kvC, appC, webC };
}

test.serial("docker: a three-service cluster runs on real containers; stop/start/restart, configure, add-services and delete act on the processes", async (t) => {
  t.timeout(600_000);
  const { sys } = t.context;
  const tenant = await createDemoTenant(sys, "docker-e2e", {
    workDirs: [sys.workDir],
  });
  tenants.push(tenant);
  const admin = tenant.admin;
  const id = await createCluster(sys.baseUrl, tenant.user, { name: "demo", clusterTemplate: "demo3", numMachines: 3 });
  await settle(t, tenant.user, id);

  const list = await nodes(t, tenant.user, id);
  const containers = await tenantContainers(tenant.name, { "corral.cluster": id });
  t.is(containers.length, 3, "one container per node");
  for (const n of list) {
    const c = await nodeContainer(tenant.name, n.id);
    const labels = JSON.parse(await docker(["inspect", "-f", "{{json .Config.Labels}}", c]));
    t.is(labels["corral.tenant"], tenant.name);
    t.is(labels["corral.cluster"], id);
    t.is((await inContainer(c, "hostname -f")).trim(), n.properties.hostname);
    t.false(JSON.stringify(n).includes("PRIVATE KEY"), "no key in the node's details");
    t.true(n.actions.some((a) => a.action === "BOOTSTRAP" && a.status === "complete"));
  }
  const first = await assertDemoRuns(t, list, (n) => nodeContainer(tenant.name, n.id));
  const { kvC, appC, webC } = first;
  const pids = async () => ({ kv: await pidOf(kvC, "kv"), app: await pidOf(appC, "app"), web: await pidOf(webC, "web") });
  const started = await pids();

  await call(t, tenant.user, "POST", `/clusters/${id}/services/stop`);
  await settle(t, tenant.user, id);
  t.deepEqual(await pids(), { kv: undefined, app: undefined, web: undefined }, "stop ends every service process");

  await call(t, tenant.user, "POST", `/clusters/${id}/services/start`);
  await settle(t, tenant.user, id);
  const restarted = await pids();
  for (const s of ["kv", "app", "web"] as const) {
    t.truthy(restarted[s], `${s} runs after start`);
    t.not(restarted[s], started[s], `${s} is a new process`);
  }

  await call(t, tenant.user, "POST", `/clusters/${id}/services/app/restart`);
  await settle(t, tenant.user, id);
  const afterAppRestart = await pids();
  t.not(afterAppRestart.app, restarted.app, "restart of app gives app a new process");
  t.is(afterAppRestart.kv, restarted.kv, "kv, which app depends on, is untouched");

  const config = (await getOk<{ config?: unknown }>(sys.baseUrl, tenant.user, `/clusters/${id}/config`)) as Record<string, any>;
  const next = { ...config, demo: { ...config["demo"], greeting: "bonjour" } };
  await call(t, tenant.user, "PUT", `/clusters/${id}/config`, { config: next, restart: true });
  await settle(t, tenant.user, id);
  const page = await httpInside(webC, 80);
  t.is(page.app.greeting, "bonjour", "configure reached the app's config and restarted it");
  t.not(await pidOf(appC, "app"), afterAppRestart.app);

  await call(t, tenant.user, "POST", `/clusters/${id}/services`, { services: ["monitor"] });
  await settle(t, tenant.user, id);
  const after = byService(await nodes(t, tenant.user, id));
  t.is(after.get("monitor")?.id, first.web.id, "monitor lands beside web (mustcoexist)");
  t.truthy(await pidOf(webC, "monitor"));
  t.is((await httpInside(webC, 9100)).monitor, (await inContainer(webC, "hostname")).trim());
  for (const c of [kvC, appC]) t.is(await pidOf(c, "monitor"), undefined, "monitor runs nowhere else");

  await call(t, admin, "DELETE", `/clusters/${id}`);
  await settle(t, tenant.user, id, "terminated");
  t.deepEqual(await tenantContainers(tenant.name, { "corral.cluster": id }), [], "delete leaves no container");
});

test.serial("docker: an action past its timeout and a container that dies mid-plan fail the create with the reason", async (t) => {
  t.timeout(600_000);
  const { sys } = t.context;
  const slow = {
    name: "slow",
    provisioner: { actions: { install: { type: "shell", fields: { script: "sleep", args: "600", timeout_s: "2" } } } },
  };
  const tenant = await createDemoTenant(sys, "docker-fail", { workDirs: [sys.workDir], extraServices: [slow] });
  tenants.push(tenant);
  const id = await createCluster(sys.baseUrl, tenant.user, { name: "slow", clusterTemplate: "demo3", numMachines: 3, services: ["kv", "app", "web", "slow"] });
  await settle(t, tenant.user, id, "incomplete");
  const failed = (await nodes(t, tenant.user, id)).flatMap((n) => n.actions).filter((a) => a.service === "slow" && a.status === "failed");
  t.true(failed.length > 0);
  t.regex(failed[0]!.stderr ?? "", /timed out after 2 s; its remote process group was killed/);
  const c = (await tenantContainers(tenant.name, { "corral.cluster": id }))[0]!;
  t.is((await inContainer(c, "pgrep -x sleep || true")).trim(), "", "the timed-out sleep was killed on the node");
  await call(t, tenant.admin, "DELETE", `/clusters/${id}`);
  await settle(t, tenant.user, id, "terminated");
  t.deepEqual(await tenantContainers(tenant.name, { "corral.cluster": id }), []);

  // A container killed while its node's action runs: the action fails (lost or refused connection), never succeeds.
  const hang = {
    name: "hang",
    provisioner: { actions: { install: { type: "shell", fields: { script: "sleep", args: "30" } } } },
  };
  const tenant2 = await createDemoTenant(sys, "docker-die", { workDirs: [sys.workDir], extraServices: [hang] });
  tenants.push(tenant2);
  const id2 = await createCluster(sys.baseUrl, tenant2.user, { name: "die", clusterTemplate: "demo3", numMachines: 3, services: ["kv", "app", "web", "hang"] });
  // Action entries reach the node's history when they end: find a running `sleep 30` inside the containers.
  const victim = await eventually(
    async () => {
      for (const c of await tenantContainers(tenant2.name, { "corral.cluster": id2 })) {
        if ((await inContainer(c, "pgrep -f '[s]leep 30' || true").catch(() => "")).trim()) return c;
      }
      return false;
    },
    { what: "the hang action running on a node", timeoutMs: 120_000, intervalMs: 200 },
  );
  const victimNode = JSON.parse(await docker(["inspect", "-f", "{{json .Config.Labels}}", victim]))["corral.node"] as string;
  await docker(["kill", victim]);
  await settle(t, tenant2.user, id2, "incomplete").catch(async (err) => {
    throw new Error(`${err}\nvictim ${victimNode}: ${JSON.stringify(await nodes(t, tenant2.user, id2), null, 1)}\n${await docker(["ps", "-a"])}`);
  });
  const actions = (await nodes(t, tenant2.user, id2)).find((n) => n.id === victimNode)!.actions.filter((a) => a.service === "hang");
  t.false(actions.some((a) => a.status === "complete"), `no action on the dead machine is reported as done: ${JSON.stringify(actions)}`);
  t.true(actions.some((a) => /ssh/.test(a.stderr ?? "")), JSON.stringify(actions));
  await call(t, tenant2.admin, "DELETE", `/clusters/${id2}`);
  await settle(t, tenant2.user, id2, "terminated");
  t.deepEqual(await tenantContainers(tenant2.name, { "corral.cluster": id2 }), [], "delete removes the dead container too");
});

test.serial("hostpool: the demo runs on existing sshd hosts; delete cleans them and frees every host", async (t) => {
  t.timeout(600_000);
  const { sys } = t.context;
  const network = await createTestNetwork(`corral-hostpool-e2e-${process.pid}`);
  const key = generateSshKeyPair();
  for (let i = 0; i < 3; i++) hosts.push(await startSshHost({ network: network.name, authorizedKeys: key.publicKey }));
  const provider = {
    name: "pool",
    providertype: "hostpool",
    provisioner: { hosts: hosts.map((h) => `root@${h.ip}`).join(","), ssh_key_resource: "pool-key", cleanup: "pkill -f '[c]orral-demo/demo.py'; true" },
  };
  const tenant = await createDemoTenant(sys, "hostpool-e2e", { workDirs: [sys.workDir], provider });
  tenants.push(tenant);
  // The key as the plugins service would sync it (an ssh_keys resource of provider type hostpool).
  const keyFile = sshKeyFile(sys.workDir, tenant.name, "hostpool", "pool-key");
  await mkdir(dirname(keyFile), { recursive: true });
  await writeFile(keyFile, key.privateKey, { mode: 0o400 });

  const id = await createCluster(sys.baseUrl, tenant.user, { name: "pooled", clusterTemplate: "demo3", numMachines: 3 });
  await settle(t, tenant.user, id);
  const byIp = new Map(hosts.map((h) => [h.ip, h.id]));
  const list = await nodes(t, tenant.user, id);
  t.deepEqual(list.map((n) => n.properties.ipaddresses["access_v4"]).sort(), [...byIp.keys()].sort(), "every host got one node");
  await assertDemoRuns(t, list, async (n) => byIp.get(n.properties.ipaddresses["access_v4"]!)!);
  const allocated = await getOk<Array<{ state: string }>>(sys.baseUrl, tenant.admin, "/providers/pool/hosts");
  t.deepEqual(allocated.map((h) => h.state), ["allocated", "allocated", "allocated"]);

  const more = await api(sys.baseUrl, "POST", "/clusters", { ...tenant.user, body: { name: "extra", clusterTemplate: "demo3", numMachines: 3 } });
  t.is(more.status, 200);
  const moreId = (more.body as { id: string }).id;
  await settle(t, tenant.user, moreId, "incomplete");
  const refusals = (await nodes(t, tenant.user, moreId)).flatMap((n) => n.actions).filter((a) => a.action === "CREATE" && a.status === "failed");
  t.regex(refusals[0]?.stderr ?? "", /no free host/);

  await call(t, tenant.admin, "DELETE", `/clusters/${id}`);
  await settle(t, tenant.user, id, "terminated");
  const freed = await getOk<Array<{ state: string }>>(sys.baseUrl, tenant.admin, "/providers/pool/hosts");
  t.deepEqual(freed.map((h) => h.state), ["free", "free", "free"], "delete returns every host to the pool");
  for (const h of hosts) {
    t.is(await inContainer(h.id, "ls -A /var/lib/corral 2>/dev/null || true"), "", "nothing of the tenant is left on the host");
    t.is(await inContainer(h.id, "pgrep -f '[c]orral-demo/demo.py' || true"), "", "the cleanup command stopped the demo");
  }
  await call(t, tenant.admin, "DELETE", `/clusters/${moreId}`);
  await settle(t, tenant.user, moreId, "terminated");
  await network.remove().catch(() => undefined);
});
