/**
 * The hostpool provider against real sshd hosts (containers of the corral/node image on a test network) and a real
 * nats-server: allocation races, adoption, CONFIRM by key and password, refused logins and hosts, DELETE's cleanup,
 * freeing and quarantine.
 */
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import ssh2 from "ssh2";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  buckets,
  type HostAllocation,
  type JsonObject,
  type TaskName,
} from "@corral/contracts";
import {
  connectNats,
  hostAllocationFilter,
  listValues,
  openBucket,
  silentLogger,
} from "@corral/shared";
import type { PluginOutcome, ProviderPlugin } from "@corral/provisioner";
import { createHostpoolProvider, sshKeyFile, SshPool } from "@corral/provisioner/testing";
import {
  createTestNetwork,
  dockerExec,
  ensureDockerForTests,
  removeTestContainers,
  startSshHost,
  type SshHost,
  type TestNetwork,
} from "../../test/helpers/docker-hosts.js";
import { testWithNats } from "../../test/helpers/nats-test.js";
import { taskMessage } from "./helpers.js";
import { pluginContext } from "./helpers/plugin-context.js";

const test = testWithNats("hostpool-ssh");

const TENANT = "acme";
const PASSWORD = "corral-test-pw";
const KEY = "pool-key";
const WRONG_KEY = "wrong-key";
/** CONFIRM's bound in these tests (60 s in production). */
const CONFIRM_BOUND_MS = 6_000;

let network: TestNetwork | undefined;
let hosts: SshHost[] = [];
let refusing: SshHost;
let workDir: string;
let secondNc: NatsConnection | undefined;
let plugins: ProviderPlugin[] = [];

test.before(async (t) => {
  await ensureDockerForTests();
  network = await createTestNetwork(`corral-hostpool-${process.pid}-${randomUUID().slice(0, 6)}`);
  const key = ssh2.utils.generateKeyPairSync("ed25519");
  const wrong = ssh2.utils.generateKeyPairSync("ed25519");
  const started = await Promise.all([
    ...[1, 2, 3].map(() =>
      startSshHost({ network: network!.name, authorizedKeys: key.public, rootPassword: PASSWORD, user: { name: "ops" } }),
    ),
    startSshHost({ network: network.name, noSshd: true }),
  ]);
  hosts = started.slice(0, 3);
  refusing = started[3]!;

  workDir = await mkdtemp(join(tmpdir(), "corral-hostpool-"));
  for (const [name, pair] of [[KEY, key], [WRONG_KEY, wrong]] as const) {
    const file = sshKeyFile(workDir, TENANT, "hostpool", name);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, pair.private, { mode: 0o400 });
  }
  // Two provisioners: each its own connection and SSH pool.
  secondNc = await connectNats({ url: t.context.nats.url, name: "hostpool-ssh-2" });
  plugins = [t.context.nc, secondNc].map((nc) =>
    createHostpoolProvider({
      access: { pool: new SshPool({ log: silentLogger }), credentials: { workDir, clusterKeys: undefined } },
      nc,
      log: silentLogger,
      confirmTimeoutMs: CONFIRM_BOUND_MS,
      confirmRetryMs: 300,
    }),
  );
});

test.after.always(async () => {
  await Promise.all(plugins.map((p) => p.close?.()));
  // Closed, not drained: testWithNats's own after.always hook, registered first, has stopped the server by now.
  await secondNc?.close();
  await removeTestContainers();
  await network?.remove();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

interface Node {
  provider: string;
  fields: JsonObject;
  nodeId: string;
  results: JsonObject;
}

const newNode = (provider: string, fields: JsonObject): Node => ({ provider, fields, nodeId: randomUUID(), results: {} });

/** Runs one provider task of a node and merges its result into the node's results, as the clusters service does. */
async function run(node: Node, taskName: TaskName, plugin: ProviderPlugin = plugins[0]!): Promise<PluginOutcome> {
  const task = taskMessage({
    tenant: TENANT,
    taskName,
    nodeId: node.nodeId,
    config: {
      sshuser: undefined,
      provider: { name: node.provider, providertype: "hostpool", provisioner: node.fields },
      results: { ...node.results },
    },
  });
  const op = taskName === "CREATE" ? plugin.create : taskName === "CONFIRM" ? plugin.confirm : plugin.delete;
  const outcome = await op(pluginContext(task, { workDir }));
  Object.assign(node.results, outcome.result ?? {});
  return outcome;
}

async function allocations(provider: string): Promise<HostAllocation[]> {
  const kv = await openBucket(secondNc!, buckets.hostPool);
  return (await listValues<HostAllocation>(kv, hostAllocationFilter(TENANT, provider))).map((e) => e.value);
}

const uniqueProvider = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;
const hostList = (list: SshHost[] = hosts, user = "") => list.map((h) => `${user}${h.ip}`).join(", ");
const keyed = (list?: SshHost[], user?: string): JsonObject => ({ hosts: hostList(list, user), ssh_key_resource: KEY });

test("CREATE - two concurrent CREATEs for different nodes get different hosts", async (t) => {
  const provider = uniqueProvider("two");
  const [a, b] = [newNode(provider, keyed()), newNode(provider, keyed())];
  const outcomes = await Promise.all([run(a, "CREATE", plugins[0]), run(b, "CREATE", plugins[1])]);
  t.deepEqual(
    outcomes.map((o) => o.status),
    [0, 0],
    JSON.stringify(outcomes),
  );
  t.not(a.results["providerid"], b.results["providerid"]);
  t.deepEqual(a.results["ssh-auth"], { user: "root", port: 22, key_resource: KEY });
  t.is((await allocations(provider)).length, 2);
});

test("CREATE - 10 CREATEs through two provisioners for a 3-host pool: exactly 3 succeed, the rest find no free host", async (t) => {
  const provider = uniqueProvider("race");
  const nodes = Array.from({ length: 10 }, () => newNode(provider, keyed()));
  const outcomes = await Promise.all(nodes.map((n, i) => run(n, "CREATE", plugins[i % 2])));
  const won = nodes.filter((_, i) => outcomes[i]!.status === 0);
  t.is(won.length, 3);
  t.deepEqual(won.map((n) => n.results["providerid"]).sort(), hosts.map((h) => `${h.ip}:22`).sort());
  for (const o of outcomes.filter((o) => o.status !== 0)) {
    t.is(o.stderr, `hostpool ${provider}: no free host: 3 hosts, 3 allocated, 0 quarantined; the cluster needs more\n`);
  }
  const held = await allocations(provider);
  t.deepEqual(held.map((a) => a.nodeId).sort(), won.map((n) => n.nodeId).sort());
  t.true(held.every((a) => a.state === "allocated"));
});

test("CREATE - a retried CREATE of a node adopts its host", async (t) => {
  const provider = uniqueProvider("adopt");
  const node = newNode(provider, keyed());
  t.is((await run(node, "CREATE", plugins[0])).status, 0);
  const first = node.results["providerid"];
  const again = await run(node, "CREATE", plugins[1]);
  t.is(again.status, 0);
  t.is(again.result?.["providerid"], first);
  t.regex(again.stdout ?? "", /already holds/);
  t.is((await allocations(provider)).length, 1);
});

test("CREATE - a bad hosts entry fails with a message naming it", async (t) => {
  const node = newNode(uniqueProvider("bad"), { hosts: `${hosts[0]!.ip}, ${hosts[1]!.ip}:70000`, ssh_password: PASSWORD });
  const out = await run(node, "CREATE");
  t.is(out.status, 1);
  t.regex(out.stderr ?? "", new RegExp(`hosts entry "${hosts[1]!.ip}:70000" has an invalid port`));
});

/** The host key the container holds for a type, as CONFIRM pins it. */
async function containerHostKey(host: SshHost, type: string): Promise<string | undefined> {
  const listing = await dockerExec(host.id, ["sh", "-c", "cat /etc/ssh/ssh_host_*_key.pub"]);
  const line = listing.stdout.split("\n").find((l) => l.startsWith(`${type} `));
  return line?.split(" ")[1];
}

test("CONFIRM - with the synced key: address, hostname and the pinned host key", async (t) => {
  const node = newNode(uniqueProvider("key"), keyed([hosts[0]!]));
  t.is((await run(node, "CREATE")).status, 0);
  const out = await run(node, "CONFIRM", plugins[1]);
  t.is(out.status, 0, out.stderr);
  t.is(out.hostname, hosts[0]!.ip);
  t.deepEqual(out.ipaddresses, { access_v4: hosts[0]!.ip, bind_v4: hosts[0]!.ip });
  const pinned = out.result?.["ssh_host_keys"] as Record<string, string>;
  const [type] = Object.keys(pinned);
  t.truthy(type);
  t.is(pinned[type!], await containerHostKey(hosts[0]!, type!));
});

test("CONFIRM - with the password field, as a user from the hosts entry", async (t) => {
  const node = newNode(uniqueProvider("pw"), { hosts: `root@${hosts[1]!.ip}:22`, ssh_password: PASSWORD });
  t.is((await run(node, "CREATE")).status, 0);
  t.deepEqual(node.results["ssh-auth"], { user: "root", port: 22, password_field: "ssh_password" });
  t.false(JSON.stringify(node.results).includes(PASSWORD), "no secret in results");
  const out = await run(node, "CONFIRM");
  t.is(out.status, 0, out.stderr);
  t.truthy(out.result?.["ssh_host_keys"]);
});

test("CONFIRM - a wrong key fails at once with the refused login", async (t) => {
  const node = newNode(uniqueProvider("wrong"), { hosts: hosts[2]!.ip, ssh_key_resource: WRONG_KEY });
  t.is((await run(node, "CREATE")).status, 0);
  const started = Date.now();
  const out = await run(node, "CONFIRM");
  t.is(out.status, 1);
  t.regex(out.stderr ?? "", /refused the login of root \(key\)/);
  t.true(Date.now() - started < CONFIRM_BOUND_MS / 2, "not retried until the bound");
});

test("CONFIRM - a host that refuses SSH fails with a clear message within the bound", async (t) => {
  const node = newNode(uniqueProvider("refuse"), { hosts: refusing.ip, ssh_key_resource: KEY });
  t.is((await run(node, "CREATE")).status, 0);
  const started = Date.now();
  const out = await run(node, "CONFIRM");
  const took = Date.now() - started;
  t.is(out.status, 1);
  t.regex(out.stderr ?? "", new RegExp(`host ${refusing.ip}:22 did not accept SSH within 6 s \\(last: .*ECONNREFUSED`));
  t.true(took >= CONFIRM_BOUND_MS - 500 && took < CONFIRM_BOUND_MS + 3_000, `took ${took} ms`);
});

const exists = async (host: SshHost, path: string) => (await dockerExec(host.id, ["test", "-e", path])).exitCode === 0;

test("DELETE - runs the cleanup (through sudo), removes /var/lib/corral and frees the host", async (t) => {
  const host = hosts[0]!;
  const provider = uniqueProvider("clean");
  const marker = `/tmp/cleaned-${provider}`;
  const fields = { ...keyed([host], "ops@"), cleanup: `touch ${marker} && whoami` };
  const node = newNode(provider, fields);
  t.is((await run(node, "CREATE")).status, 0);
  t.is((node.results["ssh-auth"] as JsonObject)["user"], "ops");
  t.is((await run(node, "CONFIRM")).status, 0);
  await dockerExec(host.id, ["sh", "-c", "mkdir -p /var/lib/corral/work && echo left > /var/lib/corral/work/file"]);

  const out = await run(node, "DELETE", plugins[1]);
  t.is(out.status, 0, out.stderr);
  t.regex(out.stdout ?? "", /^root$/m, "cleanup ran as root");
  t.true(await exists(host, marker), "cleanup ran");
  t.false(await exists(host, "/var/lib/corral"), "/var/lib/corral removed");
  t.deepEqual(await allocations(provider), []);

  const next = newNode(provider, fields);
  t.is((await run(next, "CREATE")).status, 0, "the freed host is allocated again");
  t.is(next.results["providerid"], `${host.ip}:22`);
  t.is((await run(node, "DELETE")).status, 0, "a repeated DELETE of the first node succeeds and leaves the host alone");
  t.is((await allocations(provider))[0]?.nodeId, next.nodeId);
});

test("DELETE - a failing cleanup quarantines the host, which is not allocated again", async (t) => {
  const host = hosts[1]!;
  const provider = uniqueProvider("quarantine");
  const fields = { ...keyed([host]), cleanup: "echo disk is busy >&2; exit 3" };
  const node = newNode(provider, fields);
  t.is((await run(node, "CREATE")).status, 0);
  t.is((await run(node, "CONFIRM")).status, 0);

  const out = await run(node, "DELETE");
  t.is(out.status, 0, "the node is gone from the cluster all the same");
  t.regex(out.stderr ?? "", /disk is busy/);
  t.regex(out.stderr ?? "", new RegExp(`host ${host.ip}:22 is quarantined .*DELETE /v2/providers/${provider}/hosts/${host.ip}:22/quarantine`));
  const [held] = await allocations(provider);
  t.like(held, { host: `${host.ip}:22`, state: "quarantined", nodeId: node.nodeId });
  t.regex(held?.reason ?? "", /disk is busy/);

  const next = newNode(provider, fields);
  const refused = await run(next, "CREATE", plugins[1]);
  t.is(refused.status, 1);
  t.is(refused.stderr, `hostpool ${provider}: no free host: 1 hosts, 0 allocated, 1 quarantined; the cluster needs more\n`);
  t.regex((await run(node, "DELETE")).stdout ?? "", /already quarantined/);
});

test("DELETE - a host whose key no longer matches the pinned one is quarantined", async (t) => {
  const provider = uniqueProvider("hostkey");
  const node = newNode(provider, keyed([hosts[2]!]));
  t.is((await run(node, "CREATE")).status, 0);
  t.is((await run(node, "CONFIRM")).status, 0);
  const other = ssh2.utils.generateKeyPairSync("ed25519").public.split(" ")[1]!;
  node.results["ssh_host_keys"] = { "ssh-ed25519": other };
  const out = await run(node, "DELETE");
  t.is(out.status, 0);
  t.regex(out.stderr ?? "", /host key of .* changed/);
  t.is((await allocations(provider))[0]?.state, "quarantined");
});

test("DELETE - a node without a host, or whose CONFIRM never pinned a key, succeeds", async (t) => {
  const provider = uniqueProvider("nothing");
  t.is((await run(newNode(provider, keyed()), "DELETE")).status, 0);
  const node = newNode(provider, { hosts: refusing.ip, ssh_key_resource: KEY });
  t.is((await run(node, "CREATE")).status, 0);
  const out = await run(node, "DELETE");
  t.is(out.status, 0);
  t.regex(out.stdout ?? "", /no host key was pinned/);
  t.deepEqual(await allocations(provider), []);
});
