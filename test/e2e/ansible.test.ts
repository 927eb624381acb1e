/**
 * The ansible automator end to end, through REST, on real nodes: the example catalog deploy/examples/ansible-demo
 * (service conf installs jq from the Debian mirror and templates the greeter's configuration from expanded macros;
 * service greeter runs a process that reads it, started by one rolling play over its nodes) on containers of the
 * `docker` provider, its playbooks uploaded, staged and synced as an archive. Every check looks inside the
 * containers: the package, the file, the process; configure changes the file and the handler restarts the process;
 * stop/start; a playbook recalled and synced away is no longer used; a failing play fails its task with the play's
 * error in the node's action history. Then `hosts: service` on three nodes with `serial: 1`: one play, run by the
 * first node's task, plays each node in turn, and the windows seen inside the containers do not overlap.
 */
import { execFile } from "node:child_process";
import { access, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import type { ExecutionContext } from "ava";
import { jetstreamManager } from "@nats-io/jetstream";
import { ensureAnsible, repoRoot } from "@corral/deploy";
import { storedResults } from "@corral/shared";
import { resourceDir } from "@corral/provisioner";
import { resourceArchive } from "../../services/plugins/test/tar-builder.js";
import { pluginClient } from "../helpers/plugin-rest.js";
import { api, type Caller } from "../helpers/api.js";
import { show } from "../helpers/assertions.js";
import { createCluster, createWorkerTenant, getOk, waitForStatus, type E2eTenant } from "../helpers/clusters.js";
import { inContainer, nodeContainer, removeTenantContainers, tenantContainers } from "../helpers/docker-demo.js";
import { ensureDockerForTests, removeTestContainers } from "../helpers/docker-hosts.js";
import { eventually } from "../helpers/eventually.js";
import { testWithSystem, type SystemContext } from "../helpers/system-test.js";

const run = promisify(execFile);
const test = testWithSystem({ clusters: 1, provisioners: 1, reconcileIntervalMs: 1000 });
const DEMO = join(repoRoot, "deploy", "examples", "ansible-demo");
const PLAYBOOKS = "/plugins/automatortypes/ansible/playbooks";
const cleanup: Array<{ tenant: string; network: string }> = [];

test.before(async () => {
  await Promise.all([ensureDockerForTests(), ensureAnsible()]);
});
test.after.always(async () => {
  for (const c of cleanup) await removeTenantContainers(c.tenant, c.network);
  await removeTestContainers();
});

type T = ExecutionContext<SystemContext>;

interface NodeView {
  id: string;
  services: string[];
  properties: { hostname: string; ipaddresses: Record<string, string> };
  actions: Array<{ taskId: string; action: string; service: string; status: string; stdout?: string; stderr?: string }>;
}

const FAULTY_PLAY = `- hosts: all
  gather_facts: false
  tasks:
    - name: install a package that does not exist
      ansible.builtin.apt:
        name: corral-no-such-package
`;

const BROKEN = {
  name: "broken",
  description: "A play that fails",
  provisioner: { actions: { install: { type: "ansible", fields: { playbook: "faulty/fail.yml", timeout_s: "300" } } } },
};

/** The demo catalog on the tenant's own Docker network, with service `broken` added. */
async function catalog(network: string): Promise<Record<string, any[]>> {
  const c = JSON.parse(await readFile(join(DEMO, "catalog.json"), "utf8")) as Record<string, any[]>;
  c["providers"]![0].provisioner = { network };
  c["services"]!.push(BROKEN);
  c["clustertemplates"]![0].compatibility.services.push("broken");
  return c;
}

async function call(t: T, caller: Caller, method: string, path: string, body?: unknown): Promise<void> {
  const res = await api(t.context.sys.baseUrl, method, path, { ...caller, ...(body !== undefined ? { body } : {}) });
  if (res.status !== 200) throw new Error(`${method} ${path}: ${show(res)}`);
}

async function nodes(t: T, caller: Caller, id: string): Promise<NodeView[]> {
  return (await getOk<{ nodes: NodeView[] }>(t.context.sys.baseUrl, caller, `/clusters/${id}`)).nodes;
}

/** Waits until the cluster settles as `status`; otherwise fails with the failed actions' output. */
async function settle(t: T, caller: Caller, id: string, status: "active" | "inconsistent" | "terminated" = "active"): Promise<void> {
  try {
    await waitForStatus(t.context.sys.baseUrl, caller, id, status, 300_000);
  } catch (err) {
    const failed = (await nodes(t, caller, id)).flatMap((n) => n.actions.filter((a) => a.status === "failed").map((a) => ({ node: n.properties.hostname, ...a })));
    throw new Error(`${(err as Error).message}\nfailed actions: ${JSON.stringify(failed, null, 1)}`);
  }
}

/** Uploads an archive of the playbooks resource `name`, stages that version and syncs; waits until it is installed. */
async function publishPlaybooks(t: T, tenant: E2eTenant, name: string, archive: Buffer, file: string): Promise<number> {
  const c = pluginClient(t.context.sys.baseUrl, tenant.admin);
  const uploaded = await c.upload(`${PLAYBOOKS}/${name}`, archive);
  if (uploaded.status !== 200) throw new Error(`upload ${name}: ${show(uploaded)}`);
  const { version } = JSON.parse(uploaded.text) as { version: number };
  await call(t, tenant.admin, "POST", `${PLAYBOOKS}/${name}/versions/${version}/stage`);
  await call(t, tenant.admin, "POST", "/plugins/sync");
  await waitForPlaybook(t, tenant, name, file);
  return version;
}

/** Waits until the provisioner has a playbooks archive's file installed. */
async function waitForPlaybook(t: T, tenant: E2eTenant, name: string, file: string): Promise<void> {
  const installed = join(resourceDir(t.context.sys.workDir, tenant.name, "automatortypes", "ansible", "playbooks"), name, file);
  await eventually(() => access(installed).then(() => true, () => false), { what: `${name}/${file} synced`, timeoutMs: 15_000, intervalMs: 100 });
}

const nodenumOf = (n: NodeView) => Number(n.id.slice(n.id.lastIndexOf("-") + 1));
const byNodenum = (list: readonly NodeView[]) => [...list].sort((a, b) => nodenumOf(a) - nodenumOf(b));
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** What the task of a node played by `leader`'s task (hosts: service) says, the step's nodes being `step`. */
const playedNote = (leader: NodeView, step: readonly NodeView[]) =>
  `ansible: played by the task of node ${leader.properties.hostname} (${leader.id}), which plays the ${step.length} nodes of this step at once (hosts: service): ` +
  `${byNodenum(step).map((n) => n.properties.hostname).join(", ")}\n`;

/**
 * What a node's task reported: its result on the results stream (a node's action history keeps the output of failed
 * actions only).
 */
async function reportedStdout(t: T, tenant: string, taskId: string): Promise<string | undefined> {
  const jsm = await jetstreamManager(t.context.sys.nc);
  const planId = taskId.slice(0, taskId.lastIndexOf("-"));
  return (await storedResults(jsm, { tenant, planId, taskId, dispatch: 1 }, { first: true }))[0]?.stdout;
}

/** The greeter's pid in a container, if its process is alive. */
async function greeterPid(container: string): Promise<number | undefined> {
  const out = await inContainer(container, `p=$(cat /run/corral-greeter.pid 2>/dev/null) && kill -0 "$p" 2>/dev/null && echo "$p" || true`);
  return out.trim() ? Number(out.trim()) : undefined;
}

async function httpInside(container: string, url: string): Promise<any> {
  return JSON.parse(await inContainer(container, `python3 -c "import urllib.request; print(urllib.request.urlopen('${url}', timeout=5).read().decode())"`));
}

test.serial("ansible: playbooks configure real containers through REST; configure, stop/start, recall and a failing play", async (t) => {
  t.timeout(900_000);
  const { sys } = t.context;
  const tenant = await createWorkerTenant(sys.baseUrl, sys.nc, "ansible-e2e", { workers: 4 });
  const network = `corral-test-${tenant.name}`;
  cleanup.push({ tenant: tenant.name, network });
  await call(t, tenant.admin, "POST", "/import", await catalog(network));
  // The example's own script publishes its playbooks, as a user runs it against npm start.
  const published = await run(join(DEMO, "publish-playbooks.sh"), [], {
    env: { ...process.env, CORRAL_API: sys.baseUrl, CORRAL_USER: tenant.admin.user, CORRAL_TENANT: tenant.name },
  });
  const demoVersion = Number(/playbooks demo version (\d+) staged and synced/.exec(published.stdout)?.[1]);
  t.true(demoVersion > 0, published.stdout + published.stderr);
  await waitForPlaybook(t, tenant, "demo", "greeter.yml");
  await publishPlaybooks(t, tenant, "faulty", resourceArchive("faulty", { "fail.yml": FAULTY_PLAY }), "fail.yml");

  // Create: two nodes, each with conf and greeter.
  const id = await createCluster(sys.baseUrl, tenant.user, { name: "greeters", clusterTemplate: "greeter2", numMachines: 2 });
  await settle(t, tenant.user, id);
  const list = (await nodes(t, tenant.user, id)).sort((a, b) => a.properties.hostname.localeCompare(b.properties.hostname));
  t.is(list.length, 2);
  const hostnames = list.map((n) => n.properties.hostname);
  const containers = await Promise.all(list.map((n) => nodeContainer(tenant.name, n.id)));
  // START of greeter is a rolling start (hosts: service): the task of the first node played both.
  const [first, second] = byNodenum(list);
  const [greeterStart, playedStart] = [first!, second!].map((n) => n.actions.find((a) => a.action === "START" && a.service === "greeter" && a.status === "complete"));
  t.truthy(greeterStart && playedStart, "both nodes' START completed");
  t.regex(
    (await reportedStdout(t, tenant.name, greeterStart!.taskId)) ?? "",
    new RegExp(`PLAY RECAP[\\s\\S]*${literal(first!.properties.hostname)}[\\s\\S]*${literal(second!.properties.hostname)}`),
  );
  t.is(await reportedStdout(t, tenant.name, playedStart!.taskId), playedNote(first!, list));
  for (const [i, n] of list.entries()) {
    const c = containers[i]!;
    t.deepEqual([...n.services].sort(), ["conf", "greeter"]);
    t.false(JSON.stringify(n).includes("PRIVATE KEY"), "no key in the node's details");
    t.true(n.actions.some((a) => a.action === "BOOTSTRAP" && a.status === "complete"));
    t.regex(await inContainer(c, "dpkg-query -W -f '${Status}' jq"), /install ok installed/, "jq came from the Debian mirror");
    const conf = JSON.parse(await inContainer(c, "cat /etc/corral-greeter/greeter.json"));
    t.is(conf.greeting, "hello");
    t.is(conf.me, n.properties.hostname, "%host.self% expanded for this node");
    t.deepEqual([...conf.peers].sort(), hostnames.map((h) => `http://${h}:8080`), "%join(map(host.service.greeter,...))% expanded");
    t.deepEqual(conf.conf_nodes, hostnames, "the inventory's group of service conf");
    t.is(conf.written_by.name, "CONFIGURE");
    t.is(conf.written_by.node_id, n.id);
    t.truthy(await greeterPid(c), "the greeter runs");
    const page = await httpInside(c, "http://127.0.0.1:8080/");
    t.is(page.greeting, "hello");
    t.regex(page.jq, /^jq-1\./, "the process uses the installed package");
    t.is((await httpInside(c, `http://${hostnames[(i + 1) % 2]}:8080/`)).host, hostnames[(i + 1) % 2], "each greeter reaches its peer");
    t.is((await inContainer(c, "grep -rlF -e '-----BEGIN OPENSSH PRIVATE KEY' /root /home /tmp /var/tmp /var/lib /opt /etc/corral-greeter 2>/dev/null || true")).trim(), "", "no key on the node's disk");
  }
  const pidsOf = () => Promise.all(containers.map(greeterPid));
  const started = await pidsOf();

  // Configure with a changed value: the template changes the file, its handler restarts the greeter.
  const config = (await getOk<Record<string, any>>(sys.baseUrl, tenant.user, `/clusters/${id}/config`)) as Record<string, any>;
  await call(t, tenant.user, "PUT", `/clusters/${id}/config`, { config: { ...config, greeter: { ...config["greeter"], greeting: "bonjour" } }, restart: false });
  await settle(t, tenant.user, id);
  const reconfigured = await pidsOf();
  for (const [i, c] of containers.entries()) {
    t.is(JSON.parse(await inContainer(c, "cat /etc/corral-greeter/greeter.json")).greeting, "bonjour");
    t.truthy(reconfigured[i]);
    t.not(reconfigured[i], started[i], "the handler restarted the greeter");
    t.is((await httpInside(c, "http://127.0.0.1:8080/")).greeting, "bonjour", "the new process read the new file");
  }

  // Stop and start.
  await call(t, tenant.user, "POST", `/clusters/${id}/services/stop`);
  await settle(t, tenant.user, id);
  t.deepEqual(await pidsOf(), [undefined, undefined], "stop ends the greeters");
  await call(t, tenant.user, "POST", `/clusters/${id}/services/start`);
  await settle(t, tenant.user, id);
  const restarted = await pidsOf();
  for (const [i, pid] of restarted.entries()) {
    t.truthy(pid, "start runs the greeter again");
    t.not(pid, reconfigured[i]);
  }

  // Recalled and synced away: the playbook is no longer used; the stop fails and leaves the processes alone.
  await call(t, tenant.admin, "POST", `${PLAYBOOKS}/demo/versions/${demoVersion}/recall`);
  await call(t, tenant.admin, "POST", "/plugins/sync");
  const synced = join(resourceDir(sys.workDir, tenant.name, "automatortypes", "ansible", "playbooks"), "demo");
  await eventually(() => access(synced).then(() => false, () => true), { what: "demo synced away", timeoutMs: 15_000, intervalMs: 100 });
  await call(t, tenant.user, "POST", `/clusters/${id}/services/greeter/stop`);
  await settle(t, tenant.user, id, "inconsistent");
  const refused = (await nodes(t, tenant.user, id)).flatMap((n) => n.actions).filter((a) => a.action === "STOP" && a.status === "failed");
  t.true(refused.length > 0);
  t.regex(refused[0]!.stderr ?? "", /playbook demo\/greeter\.yml is not synced to this provisioner/);
  t.deepEqual(await pidsOf(), restarted, "nothing ran");

  // Staged again: configure with restart plays it again.
  await call(t, tenant.admin, "POST", `${PLAYBOOKS}/demo/versions/${demoVersion}/stage`);
  await call(t, tenant.admin, "POST", "/plugins/sync");
  await eventually(() => access(join(synced, "greeter.yml")).then(() => true, () => false), { what: "demo synced again", timeoutMs: 15_000, intervalMs: 100 });
  await call(t, tenant.user, "PUT", `/clusters/${id}/config`, { config: { ...config, greeter: { ...config["greeter"], greeting: "hej" } }, restart: true });
  await settle(t, tenant.user, id);
  for (const c of containers) t.is((await httpInside(c, "http://127.0.0.1:8080/")).greeting, "hej");

  // A failing play fails its task, with the failed task's name and ansible's message in the node's history.
  await call(t, tenant.user, "POST", `/clusters/${id}/services`, { services: ["broken"] });
  await settle(t, tenant.user, id, "inconsistent");
  const failed = (await nodes(t, tenant.user, id)).flatMap((n) => n.actions).filter((a) => a.service === "broken" && a.status === "failed");
  t.true(failed.length > 0);
  t.regex(failed[0]!.stderr ?? "", /\[corral\] ansible: task "install a package that does not exist" failed on \S+: No package matching 'corral-no-such-package' is available/);
  t.regex(failed[0]!.stdout ?? "", /failed=1/);

  // Nothing of the runs is left in the provisioner's node directories.
  for (const n of list) {
    const dir = join(sys.workDir, tenant.name, "nodes", id, n.id);
    t.deepEqual((await readdir(dir).catch(() => [] as string[])).filter((f) => f.startsWith("ansible-")), []);
  }

  await call(t, tenant.admin, "DELETE", `/clusters/${id}`);
  await settle(t, tenant.user, id, "terminated");
  t.deepEqual(await tenantContainers(tenant.name, { "corral.cluster": id }), [], "delete leaves no container");
});

/** Each node's window, one at a time (`serial: 1`): its start and end in ns and which node's task played it. */
const ROLLING_PLAY = `- hosts: rolling
  gather_facts: false
  serial: 1
  tasks:
    - name: one node at a time
      ansible.builtin.shell: "echo start $(date +%s%N) {{ corral_task.node_id }} >> /var/lib/corral-rolling-window; sleep 1; echo end $(date +%s%N) >> /var/lib/corral-rolling-window"
`;

/** The demo's provider, hardware and image, with one service whose INSTALL plays every node of its step. */
async function rollingCatalog(network: string): Promise<Record<string, any[]>> {
  const demo = await catalog(network);
  const template = demo["clustertemplates"]![0];
  return {
    providers: demo["providers"]!,
    hardwaretypes: demo["hardwaretypes"]!,
    imagetypes: demo["imagetypes"]!,
    services: [
      {
        name: "rolling",
        description: "One play over every node of the step, one node at a time",
        provisioner: { actions: { install: { type: "ansible", fields: { playbook: "rolling/site.yml", hosts: "service", timeout_s: "300" } } } },
      },
    ],
    clustertemplates: [
      {
        ...template,
        name: "rolling3",
        compatibility: { ...template.compatibility, services: ["rolling"] },
        defaults: { ...template.defaults, services: ["rolling"], config: {} },
        constraints: { size: { min: 1 } },
      },
    ],
  };
}

test.serial("ansible: hosts: service plays the three nodes of a step in one play, one node at a time", async (t) => {
  t.timeout(600_000);
  const { sys } = t.context;
  const tenant = await createWorkerTenant(sys.baseUrl, sys.nc, "ansible-roll", { workers: 4 });
  const network = `corral-test-${tenant.name}`;
  cleanup.push({ tenant: tenant.name, network });
  await call(t, tenant.admin, "POST", "/import", await rollingCatalog(network));
  await publishPlaybooks(t, tenant, "rolling", resourceArchive("rolling", { "site.yml": ROLLING_PLAY }), "site.yml");

  const id = await createCluster(sys.baseUrl, tenant.user, { name: "rollers", clusterTemplate: "rolling3", numMachines: 3 });
  await settle(t, tenant.user, id);
  const list = byNodenum(await nodes(t, tenant.user, id));
  t.is(list.length, 3);
  const installs = list.map((n) => n.actions.filter((a) => a.action === "INSTALL" && a.service === "rolling"));
  for (const done of installs) t.deepEqual(done.map((a) => a.status), ["complete"]);

  // Only the first node's task ran ansible-playbook, over all three; the others' tasks reported who played them.
  const played = (await reportedStdout(t, tenant.name, installs[0]![0]!.taskId)) ?? "";
  for (const n of list) t.regex(played, new RegExp(`${literal(n.properties.hostname)}\\s+: ok=1\\s+changed=1\\s+unreachable=0\\s+failed=0`));
  for (const later of installs.slice(1)) t.is(await reportedStdout(t, tenant.name, later[0]!.taskId), playedNote(list[0]!, list));

  // Inside the containers: every node was played once, by the first node's task, and no two windows overlap.
  const windows = await Promise.all(
    list.map(async (n) => {
      const text = await inContainer(await nodeContainer(tenant.name, n.id), "cat /var/lib/corral-rolling-window");
      const starts = [...text.matchAll(/^start (\d+) (\S+)$/gm)];
      const ends = [...text.matchAll(/^end (\d+)$/gm)];
      t.is(starts.length, 1, `${n.properties.hostname} was played once: ${text}`);
      t.is(ends.length, 1);
      t.is(starts[0]?.[2], list[0]!.id, "by the task of the first node");
      return { host: n.properties.hostname, start: BigInt(starts[0]?.[1] ?? "-1"), end: BigInt(ends[0]?.[1] ?? "-1") };
    }),
  );
  for (const w of windows) t.true(w.start > 0n && w.end > w.start, `${w.host} was played`);
  const inTurn = [...windows].sort((a, b) => (a.start < b.start ? -1 : 1));
  for (let i = 1; i < inTurn.length; i++) t.true(inTurn[i]!.start >= inTurn[i - 1]!.end, `${inTurn[i]!.host} started after ${inTurn[i - 1]!.host} ended`);

  await call(t, tenant.admin, "DELETE", `/clusters/${id}`);
  await settle(t, tenant.user, id, "terminated");
});
