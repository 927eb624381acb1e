import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { buckets, kvKey, type TaskMessage, type TaskName } from "@corral/contracts";
import { installationId, openBucket, openClusterRecordReader, putValue, silentLogger, type KV } from "@corral/shared";
import type { PluginOutcome, ProviderPlugin } from "@corral/provisioner";
import {
  ClusterKeys,
  createDockerProvider,
  DockerClient,
  LABEL,
  labelTerm,
  nodeTarget,
  reconcileOrphans,
  SshPool,
  withTarget,
} from "@corral/provisioner/testing";
import { ensureDockerForTests } from "../../test/helpers/docker-hosts.js";
import { testWithNats } from "../../test/helpers/nats-test.js";
import { taskMessage, uniqueName } from "./helpers.js";
import { pluginContext } from "./helpers/plugin-context.js";

const exec = promisify(execFile);

const SOCKET = "/var/run/docker.sock";
const network = uniqueName("corral-test-net");
const tenants: string[] = [];
let docker: DockerClient;
let pool: SshPool;
let clusterKeys: ClusterKeys;
let provider: ProviderPlugin;
let clusters: KV;

/** The docker provider against the Docker daemon of this machine and the corral/node image. */
const test = testWithNats("docker-provider-test", async (nc) => {
  await ensureDockerForTests();
  docker = new DockerClient({ socketPath: SOCKET });
  pool = new SshPool({ log: silentLogger });
  clusterKeys = new ClusterKeys(nc);
  provider = createDockerProvider({
    access: { pool, credentials: { workDir: "/nonexistent", clusterKeys } },
    nc,
    log: silentLogger,
    clusterKeys,
    // The tests sweep themselves, limited to their own tenants: a sweep of the whole host could hit others' containers.
    reconcileIntervalMs: 0,
    socketPath: SOCKET,
  });
  clusters = await openBucket(nc, buckets.clusters);
});

test.after.always(async () => {
  if (docker) {
    for (const tenant of tenants) {
      for (const c of await docker.listContainers([labelTerm(LABEL.tenant, tenant)])) await docker.removeContainer(c.Id);
    }
  }
  await provider?.close?.();
  await exec("docker", ["network", "rm", network]).catch(() => undefined);
});

/** A fresh tenant and cluster for one test; its containers are removed after the file. */
function cluster(prefix: string) {
  const tenant = uniqueName(`t-${prefix}`);
  tenants.push(tenant);
  return { tenant, clusterId: randomUUID().slice(0, 8) };
}

interface NodeInput {
  tenant: string;
  clusterId: string;
  nodenum?: number;
  flavor?: string;
  image?: string;
  /** Admin fields; the file's own network unless given. */
  provisioner?: Record<string, string>;
}

function nodeTask(input: NodeInput, taskName: TaskName, previous: PluginOutcome[] = []): TaskMessage {
  const nodenum = input.nodenum ?? 1000;
  return taskMessage({
    tenant: input.tenant,
    clusterId: input.clusterId,
    nodeId: `${input.clusterId}-${nodenum}`,
    taskName,
    config: {
      hostname: `node-${nodenum}.${input.clusterId}.corral.test`,
      nodenum,
      flavor: input.flavor ?? "",
      image: input.image ?? "",
      provider: { name: "docker-test", providertype: "docker", provisioner: input.provisioner ?? { network } },
      results: Object.assign({}, ...previous.map((o) => o.result ?? {})),
      ipaddresses: Object.assign({}, ...previous.map((o) => o.ipaddresses ?? {})),
    },
  });
}

const run = (input: NodeInput, taskName: "CREATE" | "CONFIRM" | "DELETE", previous: PluginOutcome[] = []) => {
  const task = nodeTask(input, taskName, previous);
  const op = taskName === "CREATE" ? provider.create : taskName === "CONFIRM" ? provider.confirm : provider.delete;
  return op(pluginContext(task));
};

const nodeContainers = (tenant: string, clusterId: string, nodenum = 1000) =>
  docker.listContainers([labelTerm(LABEL.tenant, tenant), labelTerm(LABEL.node, `${clusterId}-${nodenum}`)]);

test("CREATE, CONFIRM, SSH with the pinned host key and the cluster key, DELETE", async (t) => {
  const c = cluster("life");
  const one = { ...c, nodenum: 1000, flavor: "0.5x256m" };
  const two = { ...c, nodenum: 1001 };
  const [created1, created2] = await Promise.all([run(one, "CREATE"), run(two, "CREATE")]);
  t.is(created1.status, 0, created1.stderr);
  t.is(created2.status, 0, created2.stderr);
  const providerId = created1.result?.["providerid"];
  t.is(typeof providerId, "string");
  t.deepEqual(created1.result?.["ssh-auth"], { user: "root", cluster_key: true });
  t.notRegex(JSON.stringify(created1), /PRIVATE KEY/, "no secret in the result");

  // The labels are what `docker ps` selects by.
  const { stdout: listed } = await exec("docker", ["ps", "--filter", `label=corral.cluster=${c.clusterId}`, "--format", "{{.ID}} {{.Label \"corral.node\"}}"]);
  t.deepEqual(listed.trim().split("\n").map((l) => l.split(" ")[1]).sort(), [`${c.clusterId}-1000`, `${c.clusterId}-1001`]);

  const inspected = await docker.inspectContainer(String(providerId));
  t.is(inspected.HostConfig.NanoCpus, 5e8);
  t.is(inspected.HostConfig.Memory, 256 * 1024 ** 2);
  t.is(inspected.Config.Hostname, "node-1000");
  t.is(inspected.Config.Domainname, `${c.clusterId}.corral.test`);
  t.like(inspected.Config.Labels, { "corral.tenant": c.tenant, "corral.cluster": c.clusterId, "corral.node": `${c.clusterId}-1000`, "corral.managed": "docker-provider" });
  t.true(inspected.NetworkSettings.Networks?.[network]?.Aliases?.includes(`node-1000.${c.clusterId}.corral.test`));
  const second = await docker.inspectContainer(String(created2.result?.["providerid"]));
  t.is(second.HostConfig.NanoCpus, 0, "no flavor, no limits");
  t.is(second.HostConfig.Memory, 0);

  const [confirmed1, confirmed2] = await Promise.all([run(one, "CONFIRM", [created1]), run(two, "CONFIRM", [created2])]);
  t.is(confirmed1.status, 0, confirmed1.stderr);
  t.is(confirmed2.status, 0, confirmed2.stderr);
  t.is(confirmed1.hostname, `node-1000.${c.clusterId}.corral.test`);
  const ip = confirmed1.ipaddresses?.["access_v4"];
  t.regex(ip ?? "", /^\d+\.\d+\.\d+\.\d+$/);
  t.is(confirmed1.ipaddresses?.["bind_v4"], ip);
  const hostKeys = confirmed1.result?.["ssh_host_keys"] as Record<string, string>;
  t.is(Object.keys(hostKeys).length, 1);

  // A later task of the node reaches it the way automators do: address, ssh-auth and pinned key from the results.
  const later = nodeTask(one, "INSTALL" as TaskName, [created1, confirmed1]);
  const resolved = await nodeTarget(later, { workDir: "/nonexistent", clusterKeys });
  if (!resolved.ok) return t.fail(resolved.error);
  let stdout = "";
  const outcome = await withTarget(pool, resolved.target, new AbortController().signal, "test", async (node) => {
    const out = await node.run({
      command: `hostname; getent hosts node-1001.${c.clusterId}.corral.test | cut -d' ' -f1`,
      timeoutMs: 20_000,
      signal: new AbortController().signal,
    });
    stdout = out.stdout.text();
    return { status: out.exitCode ?? 1, stderr: out.stderr.text() };
  });
  t.is(outcome.status, 0, outcome.stderr);
  t.deepEqual(stdout.trim().split("\n"), ["node-1000", confirmed2.ipaddresses?.["access_v4"]], "the other node's full hostname resolves");

  const deleted1 = await run(one, "DELETE", [created1, confirmed1]);
  t.is(deleted1.status, 0, deleted1.stderr);
  t.is((await nodeContainers(c.tenant, c.clusterId, 1000)).length, 0);
  t.truthy(await clusterKeys.read(c.tenant, c.clusterId), "the key stays while node 1001 lives");
  const again = await run(one, "DELETE", [created1, confirmed1]);
  t.is(again.status, 0, again.stderr);
  t.regex(again.stdout ?? "", /no container left/);
  const deleted2 = await run(two, "DELETE", [created2, confirmed2]);
  t.is(deleted2.status, 0, deleted2.stderr);
  t.is(await clusterKeys.read(c.tenant, c.clusterId), undefined, "the cluster key goes with the last container");
});

test("CREATE retried for a node adopts its container, stopped or not, also when run concurrently", async (t) => {
  const c = cluster("adopt");
  const [a, b] = await Promise.all([run(c, "CREATE"), run(c, "CREATE")]);
  t.is(a.status, 0, a.stderr);
  t.is(b.status, 0, b.stderr);
  t.is(a.result?.["providerid"], b.result?.["providerid"]);
  const id = String(a.result?.["providerid"]);
  await exec("docker", ["stop", "-t", "0", id]);
  const retried = await run(c, "CREATE");
  t.is(retried.status, 0, retried.stderr);
  t.is(retried.result?.["providerid"], id);
  t.regex(retried.stdout ?? "", /adopted/);
  t.true((await docker.inspectContainer(id)).State.Running, "the stopped container was started again");
  t.is((await nodeContainers(c.tenant, c.clusterId)).length, 1, "exactly one container");
});

test("CONFIRM of a container that died fails saying so", async (t) => {
  const c = cluster("died");
  const created = await run(c, "CREATE");
  t.is(created.status, 0, created.stderr);
  await exec("docker", ["kill", String(created.result?.["providerid"])]);
  const confirmed = await run(c, "CONFIRM", [created]);
  t.is(confirmed.status, 1);
  t.regex(confirmed.stderr ?? "", /container corral-.* is exited \(exit code 137\)/);
});

test("CONFIRM fails at once when sshd refuses the cluster key", async (t) => {
  const c = cluster("auth");
  const created = await run(c, "CREATE");
  t.is(created.status, 0, created.stderr);
  // Another key pair in KV: the container still only accepts the first one.
  await clusterKeys.remove(c.tenant, c.clusterId);
  await clusterKeys.getOrCreate(c.tenant, c.clusterId);
  const started = Date.now();
  const confirmed = await run(c, "CONFIRM", [created]);
  t.is(confirmed.status, 1);
  t.regex(confirmed.stderr ?? "", /refused the login of root \(key\)/);
  t.true(Date.now() - started < 30_000);
});

test("the reconciler removes containers of unknown, foreign and terminated clusters and keeps the others", async (t) => {
  const tenant = cluster("sweep").tenant;
  const ids = { known: "known001", unknown: "unknwn01", terminated: "termin01", foreign: "foreign1" };
  await putValue(clusters, kvKey(ids.known), { tenant, status: "active" });
  await putValue(clusters, kvKey(ids.terminated), { tenant, status: "terminated" });
  await putValue(clusters, kvKey(ids.foreign), { tenant: `${tenant}-other`, status: "active" });
  for (const clusterId of Object.values(ids)) {
    const created = await run({ tenant, clusterId }, "CREATE");
    t.is(created.status, 0, created.stderr);
  }
  // Not managed: never touched, whatever its labels say.
  const { stdout: unmanaged } = await exec("docker", [
    "run", "-d", "--network", network, "--label", `corral.tenant=${tenant}`, "--label", "corral.cluster=unmanaged",
    "corral/node:bookworm", "sleep", "infinity",
  ]);

  // Another installation's container on the same Docker host: not this reconciler's to judge.
  const { stdout: foreignInstallation } = await exec("docker", [
    "run", "-d", "--network", network, "--label", `corral.tenant=${tenant}`, "--label", "corral.cluster=other-installation",
    "--label", "corral.managed=docker-provider", "--label", "corral.installation=another-corral", "corral/node:bookworm", "sleep", "infinity",
  ]);
  const scope = [labelTerm(LABEL.tenant, tenant)];
  const base = { docker, clusters: await openClusterRecordReader(t.context.nc), clusterKeys, installation: await installationId(t.context.nc), log: silentLogger, scope };
  const young = await reconcileOrphans({ ...base, orphanGraceMs: 600_000 });
  t.is(young.checked, 4);
  t.deepEqual(young.removed, [], "nothing within the grace period");

  const swept = await reconcileOrphans({ ...base, orphanGraceMs: 0 });
  t.is(swept.removed.length, 3);
  const left = await docker.listContainers(scope);
  t.deepEqual(left.map((c) => c.Labels?.["corral.cluster"]).sort(), [ids.known, "other-installation", "unmanaged"]);
  t.truthy(left.find((c) => c.Id === unmanaged.trim()));
  t.truthy(left.find((c) => c.Id === foreignInstallation.trim()));
  t.truthy(await clusterKeys.read(tenant, ids.known));
  t.is(await clusterKeys.read(tenant, ids.unknown), undefined, "an orphan cluster's key goes with its containers");
});

test("a bad flavor, a missing image and an unreachable Docker fail with clear messages", async (t) => {
  const c = cluster("bad");
  const flavor = await run({ ...c, flavor: "large" }, "CREATE");
  t.is(flavor.status, 1);
  t.regex(flavor.stderr ?? "", /flavor "large" is not <cpus>x<memory> \(for example 1x512m, 2x4g or 0\.5x256m\)/);

  const image = await run({ ...c, image: "corral/missing:never" }, "CREATE");
  t.is(image.status, 1);
  t.regex(image.stderr ?? "", /image corral\/missing:never is not on this Docker host; build it with npm run node-image/);
  t.is((await nodeContainers(c.tenant, c.clusterId)).length, 0);

  const socket = "/tmp/corral-no-such-docker.sock";
  for (const taskName of ["CREATE", "CONFIRM", "DELETE"] as const) {
    const out = await run({ ...c, provisioner: { network, socket_path: socket } }, taskName);
    t.is(out.status, 1, taskName);
    t.regex(out.stderr ?? "", /the Docker daemon is not reachable at \/tmp\/corral-no-such-docker\.sock/, taskName);
  }
});

test("without admin fields the local Docker and the network corral are used", async (t) => {
  const c = { ...cluster("defaults"), provisioner: {} };
  const created = await run(c, "CREATE");
  t.is(created.status, 0, created.stderr);
  const inspected = await docker.inspectContainer(String(created.result?.["providerid"]));
  t.deepEqual(Object.keys(inspected.NetworkSettings.Networks ?? {}), ["corral"]);
  t.is((await docker.listNetworks("corral")).length, 1);
  const deleted = await run(c, "DELETE", [created]);
  t.is(deleted.status, 0, deleted.stderr);
});
