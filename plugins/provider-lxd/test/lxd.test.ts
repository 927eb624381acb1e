/**
 * The lxd provider against the real LXD of this machine (test/helpers/lxd.ts installs and starts it, makes a pool, a
 * bridge and the node image): CREATE, CONFIRM and DELETE of system containers, idempotent redelivery, limits, the
 * cluster key by cloud-init and by the file API, pinned host keys, the orphan sweep, HTTPS with a client
 * certificate, and the failures. Every instance belongs to a tenant of this file and is removed after it.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { buckets, kvKey, type TaskMessage, type TaskName } from "@corral/contracts";
import { installationId, openBucket, openClusterRecordReader, putValue, silentLogger, type KV } from "@corral/shared";
import {
  ClusterKeys,
  nodeTarget,
  SshPool,
  withTarget,
  type PluginContext,
  type PluginOutcome,
  type ProviderPlugin,
} from "@corral/provisioner/sdk";
import { createLxdProvider, instanceName, LxdClient, sweepLxdOrphans } from "@corral/provider-lxd";
import { freePort } from "@corral/deploy";
import { ensureLxdForTests, instancesWith, lxc, lxcExec, releaseLxdForTests, removeTenantInstances, tenantInstances, type LxdForTests } from "../../../test/helpers/lxd.js";
import { testWithNats } from "../../../test/helpers/nats-test.js";

const exec = promisify(execFile);
const tenants: string[] = [];
let env: LxdForTests;
let pool: SshPool;
let clusterKeys: ClusterKeys;
let provider: ProviderPlugin;
let clusters: KV;
let installation: string;
let lxd: LxdClient;

const test = testWithNats("lxd-provider-test");

test.before(async (t) => {
  // Installing LXD and building its image may take minutes on a fresh machine.
  t.timeout(45 * 60_000);
  env = await ensureLxdForTests();
  const { nc } = t.context;
  pool = new SshPool({ log: silentLogger });
  clusterKeys = new ClusterKeys(nc);
  installation = await installationId(nc);
  provider = createLxdProvider({
    pool,
    clusterKeys,
    log: silentLogger,
    clusters: () => openClusterRecordReader(nc),
    installationId: () => installationId(nc),
    socketPath: env.socketPath,
    // The tests sweep themselves, limited to their own tenants: a sweep of the whole LXD could hit others' instances.
    reconcileIntervalMs: 0,
    confirmTimeoutMs: 120_000,
  });
  clusters = await openBucket(nc, buckets.clusters);
  lxd = new LxdClient({ endpoint: { kind: "unix", socketPath: env.socketPath } });
});

test.after.always(async () => {
  for (const tenant of tenants) await removeTenantInstances(tenant).catch(() => undefined);
  await provider?.close?.();
  await pool?.close();
  lxd?.close();
  await releaseLxdForTests();
});

/** A fresh tenant and cluster for one test; its instances are removed after the file. */
function cluster(prefix: string) {
  const tenant = `t-${prefix}-${randomUUID().slice(0, 6)}`;
  tenants.push(tenant);
  return { tenant, clusterId: randomUUID().slice(0, 8) };
}

interface NodeInput {
  tenant: string;
  clusterId: string;
  nodenum?: number;
  flavor?: string;
  image?: string;
  sshuser?: string;
  /** Admin fields; the helpers' network and pool unless given. */
  provisioner?: Record<string, string>;
}

function nodeTask(input: NodeInput, taskName: TaskName, previous: PluginOutcome[] = []): TaskMessage {
  const nodenum = input.nodenum ?? 1000;
  return {
    tenant: input.tenant,
    clusterId: input.clusterId,
    planId: `${input.clusterId}-001`,
    taskId: `${input.clusterId}-001-${randomUUID().slice(0, 8)}`,
    dispatch: 1,
    taskName,
    nodeId: `${input.clusterId}-${nodenum}`,
    submitTime: Date.now(),
    config: {
      cluster: {},
      hostname: `node${input.clusterId}-${nodenum}.corral.test`,
      ipaddresses: Object.assign({}, ...previous.map((o) => o.ipaddresses ?? {})),
      nodenum,
      hardwaretype: "small",
      imagetype: "debian12",
      flavor: input.flavor ?? "",
      image: input.image ?? "",
      sshuser: input.sshuser ?? "root",
      services: [],
      automators: [],
      provider: { name: "lxd-test", providertype: "lxd", provisioner: input.provisioner ?? env.providerFields },
      results: Object.assign({}, ...previous.map((o) => o.result ?? {})),
    },
  };
}

const context = (task: TaskMessage, signal = new AbortController().signal): PluginContext => ({
  task,
  tenant: task.tenant,
  workDir: "/nonexistent",
  provisionerId: "p",
  workerId: "w",
  signal,
  log: silentLogger,
});

const run = (input: NodeInput, taskName: "CREATE" | "CONFIRM" | "DELETE", previous: PluginOutcome[] = [], plugin = provider) => {
  const task = nodeTask(input, taskName, previous);
  const op = taskName === "CREATE" ? plugin.create : taskName === "CONFIRM" ? plugin.confirm : plugin.delete;
  return op(context(task));
};

const nodeInstances = (input: NodeInput, nodenum = input.nodenum ?? 1000) =>
  tenantInstances(input.tenant, { "user.corral.node": `${input.clusterId}-${nodenum}` });

/** Runs a command on the node over SSH the way automators do: address, ssh-auth and pinned key from the results. */
async function overSsh(input: NodeInput, previous: PluginOutcome[], command: string): Promise<{ status: number; stdout: string; stderr?: string }> {
  const later = nodeTask(input, "INSTALL" as TaskName, previous);
  const resolved = await nodeTarget(later, { workDir: "/nonexistent", clusterKeys });
  if (!resolved.ok) return { status: 1, stdout: "", stderr: resolved.error };
  let stdout = "";
  const outcome = await withTarget(pool, resolved.target, new AbortController().signal, "test", async (node) => {
    const out = await node.run({ command, timeoutMs: 20_000, signal: new AbortController().signal });
    stdout = out.stdout.text();
    return { status: out.exitCode ?? 1, stderr: out.stderr.text() };
  });
  return { status: outcome.status, stdout, ...(outcome.stderr ? { stderr: outcome.stderr } : {}) };
}

test.serial("CREATE, CONFIRM, SSH with the pinned host key and the cluster key, limits, DELETE", async (t) => {
  t.timeout(300_000);
  const c = cluster("life");
  const one = { ...c, nodenum: 1000, flavor: "1x256m" };
  const two = { ...c, nodenum: 1001 };
  const [created1, created2] = await Promise.all([run(one, "CREATE"), run(two, "CREATE")]);
  t.is(created1.status, 0, created1.stderr);
  t.is(created2.status, 0, created2.stderr);
  const name = String(created1.result?.["providerid"]);
  t.is(name, instanceName(installation, c, 1000, `node${c.clusterId}-1000.corral.test`));
  t.deepEqual(created1.result?.["ssh-auth"], { user: "root", cluster_key: true });
  t.notRegex(JSON.stringify(created1), /PRIVATE KEY/, "no secret in the result");

  // The config keys are what `lxc list` and the sweep select by.
  const [made] = await instancesWith({ "user.corral.node": `${c.clusterId}-1000` });
  t.like(made?.config, {
    "user.corral.tenant": c.tenant,
    "user.corral.cluster": c.clusterId,
    "user.corral.node": `${c.clusterId}-1000`,
    "user.corral.managed": "lxd-provider",
    "user.corral.installation": installation,
    "limits.cpu": "1",
    "limits.memory": String(256 * 1024 ** 2),
  });
  t.regex(made?.config["user.user-data"] ?? "", /^#cloud-config\n/);
  t.notRegex(made?.config["user.user-data"] ?? "", /PRIVATE KEY/);
  const second = (await instancesWith({ "user.corral.node": `${c.clusterId}-1001` }))[0];
  t.is(second?.config["limits.cpu"], undefined, "no flavor, no limits");
  t.is(second?.config["limits.memory"], undefined);

  const [confirmed1, confirmed2] = await Promise.all([run(one, "CONFIRM", [created1]), run(two, "CONFIRM", [created2])]);
  t.is(confirmed1.status, 0, confirmed1.stderr);
  t.is(confirmed2.status, 0, confirmed2.stderr);
  t.is(confirmed1.hostname, `${name}.lxd`, "the instance's name in the bridge's DNS domain");
  const ip = confirmed1.ipaddresses?.["access_v4"] ?? "";
  t.true(ip.startsWith(env.subnet.split(".").slice(0, 3).join(".")), `${ip} is on ${env.subnet}`);
  t.is(confirmed1.ipaddresses?.["bind_v4"], ip);

  // The pinned key is the one in the instance's files, read here with lxc.
  const hostKeys = confirmed1.result?.["ssh_host_keys"] as Record<string, string>;
  const pub = (await lxcExec(name, "cat /etc/ssh/ssh_host_ed25519_key.pub")).trim().split(/\s+/);
  t.deepEqual(hostKeys, { "ssh-ed25519": pub[1] });
  t.is((await lxcExec(name, "cat /root/.ssh/authorized_keys")).trim(), (await clusterKeys.read(c.tenant, c.clusterId))?.publicKey.trim() ?? "");

  const ssh = await overSsh(one, [created1, confirmed1], `hostname; nproc; cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max; getent hosts ${confirmed2.hostname} | cut -d' ' -f1`);
  t.is(ssh.status, 0, ssh.stderr);
  t.deepEqual(ssh.stdout.trim().split("\n"), [name, "1", String(256 * 1024 ** 2), confirmed2.ipaddresses?.["access_v4"] ?? "?"], "limits inside; the other node's name resolves");

  // A key other than the pinned one is refused.
  const forged = await overSsh(one, [created1, { ...confirmed1, result: { ssh_host_keys: { "ssh-ed25519": "AAAAC3NzaC1lZDI1NTE5AAAAIBcrFx7sXz9s1m1oG0Z6pC3cXf0k4r2hEvCy3kAa1Bq9" } } }], "true");
  t.is(forged.status, 1);
  t.regex(forged.stderr ?? "", /host key of .* changed/);

  const deleted1 = await run(one, "DELETE", [created1, confirmed1]);
  t.is(deleted1.status, 0, deleted1.stderr);
  t.deepEqual(await nodeInstances(one), []);
  t.truthy(await clusterKeys.read(c.tenant, c.clusterId), "the key stays while node 1001 lives");
  const again = await run(one, "DELETE", [created1, confirmed1]);
  t.is(again.status, 0, again.stderr);
  t.regex(again.stdout ?? "", /no instance left to remove/);
  const deleted2 = await run(two, "DELETE", [created2, confirmed2]);
  t.is(deleted2.status, 0, deleted2.stderr);
  t.is(await clusterKeys.read(c.tenant, c.clusterId), undefined, "the cluster key goes with the last instance");
});

test.serial("a redelivered CREATE adopts the node's instance: after the first, concurrently, and while LXD still creates it", async (t) => {
  t.timeout(300_000);
  const c = cluster("adopt");
  const [a, b] = await Promise.all([run(c, "CREATE"), run(c, "CREATE")]);
  t.is(a.status, 0, a.stderr);
  t.is(b.status, 0, b.stderr);
  t.is(a.result?.["providerid"], b.result?.["providerid"]);
  const name = String(a.result?.["providerid"]);
  await lxc(["stop", "--force", name]);
  const retried = await run(c, "CREATE");
  t.is(retried.status, 0, retried.stderr);
  t.is(retried.result?.["providerid"], name);
  t.regex(retried.stdout ?? "", /adopted/);
  t.is((await lxd.getInstance(name))?.status, "Running", "the stopped instance was started again");
  t.deepEqual(await nodeInstances(c), [name], "exactly one instance");
  const confirmed = await run(c, "CONFIRM", [retried]);
  t.is(confirmed.status, 0, confirmed.stderr);

  // A provisioner killed mid-CREATE leaves LXD creating the instance; the CREATE run again waits for it and adopts it.
  const d = { ...cluster("midway"), nodenum: 1003 };
  const key = await clusterKeys.getOrCreate(d.tenant, d.clusterId);
  const midway = instanceName(installation, d, 1003, `node${d.clusterId}-1003.corral.test`);
  await lxd.createInstance({
    name: midway,
    type: "container",
    source: { type: "image", alias: env.image },
    profiles: ["default"],
    devices: { eth0: { type: "nic", name: "eth0", network: env.network }, root: { type: "disk", path: "/", pool: env.storagePool } },
    config: {
      "user.corral.installation": installation,
      "user.corral.tenant": d.tenant,
      "user.corral.cluster": d.clusterId,
      "user.corral.node": `${d.clusterId}-1003`,
      "user.corral.managed": "lxd-provider",
      "user.user-data": `#cloud-config\n${JSON.stringify({ disable_root: false, users: [], ssh_authorized_keys: [key.publicKey] })}\n`,
    },
    start: true,
  });
  const adopted = await run(d, "CREATE");
  t.is(adopted.status, 0, adopted.stderr);
  t.is(adopted.result?.["providerid"], midway);
  t.regex(adopted.stdout ?? "", /adopted/);
  t.deepEqual(await nodeInstances(d), [midway]);
  const reached = await run(d, "CONFIRM", [adopted]);
  t.is(reached.status, 0, reached.stderr);
});

test.serial("the key pushed through the file API, and a non-root SSH user made by cloud-init", async (t) => {
  t.timeout(300_000);
  const viaFile = { ...cluster("file"), provisioner: { ...env.providerFields, key_delivery: "file" } };
  const viaUser = { ...cluster("user"), sshuser: "debian" };
  const [createdFile, createdUser] = await Promise.all([run(viaFile, "CREATE"), run(viaUser, "CREATE")]);
  t.is(createdFile.status, 0, createdFile.stderr);
  t.is(createdUser.status, 0, createdUser.stderr);
  t.deepEqual(createdUser.result?.["ssh-auth"], { user: "debian", cluster_key: true });
  const fileInstance = (await instancesWith({ "user.corral.tenant": viaFile.tenant }))[0];
  t.is(fileInstance?.config["user.user-data"], undefined, "no user-data: the key went through the file API");

  const [confirmedFile, confirmedUser] = await Promise.all([run(viaFile, "CONFIRM", [createdFile]), run(viaUser, "CONFIRM", [createdUser])]);
  t.is(confirmedFile.status, 0, confirmedFile.stderr);
  t.is(confirmedUser.status, 0, confirmedUser.stderr);
  const asRoot = await overSsh(viaFile, [createdFile, confirmedFile], "id -un");
  t.is(asRoot.stdout.trim(), "root", asRoot.stderr);
  // Commands run as root through sudo -n: the login was debian's.
  const asUser = await overSsh(viaUser, [createdUser, confirmedUser], 'echo "$SUDO_USER"; id -un');
  t.deepEqual(asUser.stdout.trim().split("\n"), ["debian", "root"], asUser.stderr);

  const refused = await run({ ...cluster("filebad"), sshuser: "debian", provisioner: { ...env.providerFields, key_delivery: "file" } }, "CREATE");
  t.is(refused.status, 1);
  t.regex(refused.stderr ?? "", /key_delivery file installs the key for root only/);
});

test.serial("CONFIRM of a stopped instance fails saying so; CONFIRM without an instance too", async (t) => {
  t.timeout(300_000);
  const c = cluster("stopped");
  const created = await run(c, "CREATE");
  t.is(created.status, 0, created.stderr);
  await lxc(["stop", "--force", String(created.result?.["providerid"])]);
  const confirmed = await run(c, "CONFIRM", [created]);
  t.is(confirmed.status, 1);
  t.regex(confirmed.stderr ?? "", /instance corral-.* is Stopped/);
  const none = await run(cluster("none"), "CONFIRM");
  t.is(none.status, 1);
  t.regex(none.stderr ?? "", /instance corral-.* does not exist \(CREATE makes it\)/);
});

test.serial("the sweep removes instances of unknown, foreign and terminated clusters and keeps the others", async (t) => {
  t.timeout(300_000);
  const tenant = cluster("sweep").tenant;
  const ids = { known: "known001", unknown: "unknwn01", terminated: "termin01", foreign: "foreign1" };
  await putValue(clusters, kvKey(ids.known), { tenant, status: "active" });
  await putValue(clusters, kvKey(ids.terminated), { tenant, status: "terminated" });
  await putValue(clusters, kvKey(ids.foreign), { tenant: `${tenant}-other`, status: "active" });
  const created = await Promise.all(Object.values(ids).map((clusterId) => run({ tenant, clusterId }, "CREATE")));
  for (const out of created) t.is(out.status, 0, out.stderr);
  // Another installation's instance on the same LXD: not this sweep's to judge.
  await lxc(["init", env.image, `corral-other-inst-${randomUUID().slice(0, 6)}`, "-s", env.storagePool, "-n", env.network,
    "-c", `user.corral.tenant=${tenant}`, "-c", "user.corral.cluster=other", "-c", "user.corral.managed=lxd-provider", "-c", "user.corral.installation=another-corral"]);

  const base = { lxd, clusters: await openClusterRecordReader(t.context.nc), clusterKeys, installation, log: silentLogger, only: (x: string) => x === tenant };
  const young = await sweepLxdOrphans({ ...base, orphanGraceMs: 600_000 });
  t.is(young.checked, 4);
  t.deepEqual(young.removed, [], "nothing within the grace period");
  const swept = await sweepLxdOrphans({ ...base, orphanGraceMs: 0 });
  t.is(swept.removed.length, 3);
  const left = await instancesWith({ "user.corral.tenant": tenant });
  t.deepEqual(left.map((i) => i.config["user.corral.cluster"]).sort(), [ids.known, "other"]);
  t.truthy(await clusterKeys.read(tenant, ids.known));
  t.is(await clusterKeys.read(tenant, ids.unknown), undefined, "an orphan cluster's key goes with its instances");
});

test.serial("a missing image, a bad flavor, a bad setting and an unreachable LXD fail with clear messages", async (t) => {
  t.timeout(120_000);
  const c = cluster("bad");
  const image = await run({ ...c, image: "corral/missing-image" }, "CREATE");
  t.is(image.status, 1);
  t.regex(image.stderr ?? "", /image corral\/missing-image is neither an image alias nor a fingerprint on /);
  const flavor = await run({ ...c, flavor: "large" }, "CREATE");
  t.is(flavor.status, 1);
  t.regex(flavor.stderr ?? "", /flavor "large" is not <cpus>x<memory>/);
  const setting = await run({ ...c, provisioner: { instance_type: "vm" } }, "CREATE");
  t.is(setting.status, 1);
  t.regex(setting.stderr ?? "", /instance_type "vm" is neither container nor virtual-machine/);
  t.deepEqual(await tenantInstances(c.tenant), []);
  for (const taskName of ["CREATE", "CONFIRM", "DELETE"] as const) {
    const out = await run({ ...c, provisioner: { socket_path: "/tmp/corral-no-such-lxd.socket" } }, taskName);
    t.is(out.status, 1, taskName);
    t.regex(out.stderr ?? "", /LXD is not reachable at \/tmp\/corral-no-such-lxd\.socket/, taskName);
  }
});

test.serial("a remote LXD over HTTPS with a client certificate, its server certificate pinned", async (t) => {
  t.timeout(300_000);
  const dir = await mkdtemp(join(tmpdir(), "corral-lxd-tls-"));
  const server = (await lxd.server()) as { environment?: { certificate?: string }; config?: Record<string, string> };
  const previousAddress = ((await lxc(["config", "get", "core.https_address"])) || "").trim();
  const port = await freePort();
  await exec("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
    "-subj", "/CN=corral-lxd-test", "-keyout", join(dir, "client.key"), "-out", join(dir, "client.crt")]);
  const certName = `corral-test-${randomUUID().slice(0, 6)}`;
  t.teardown(async () => {
    await lxc(["config", "trust", "remove", certName]).catch(() => undefined);
    await lxc(["config", "set", "core.https_address", previousAddress]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });
  if (!previousAddress) await lxc(["config", "set", "core.https_address", `127.0.0.1:${port}`]);
  const address = previousAddress || `127.0.0.1:${port}`;
  await lxc(["config", "trust", "add", join(dir, "client.crt"), "--name", certName]);
  const fields = {
    ...env.providerFields,
    url: `https://${address.replace(/^0\.0\.0\.0|^\[::\]/, "127.0.0.1")}`,
    client_cert: await readFile(join(dir, "client.crt"), "utf8"),
    client_key: await readFile(join(dir, "client.key"), "utf8"),
    server_cert: String(server.environment?.certificate ?? ""),
  };
  const c = { ...cluster("https"), provisioner: fields };
  const created = await run(c, "CREATE");
  t.is(created.status, 0, created.stderr);
  t.regex(created.stdout ?? "", /started on https:\/\/127\.0\.0\.1:/);
  const confirmed = await run(c, "CONFIRM", [created]);
  t.is(confirmed.status, 0, confirmed.stderr);
  const deleted = await run(c, "DELETE", [created, confirmed]);
  t.is(deleted.status, 0, deleted.stderr);
  t.deepEqual(await tenantInstances(c.tenant), []);

  // Another server certificate than the LXD's: refused before anything is sent.
  const wrong = await run({ ...c, provisioner: { ...fields, server_cert: fields.client_cert } }, "CREATE");
  t.is(wrong.status, 1);
  t.regex(wrong.stderr ?? "", /LXD is not reachable at https:\/\/127\.0\.0\.1:/);
});
