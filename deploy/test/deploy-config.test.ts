/**
 * Issue 14: the three-machine NATS configuration `npm run deploy-config` writes (deploy/src/deploy-config.ts), run on
 * loopback as three nats-servers: they form one JetStream cluster over TLS routes, require TLS of clients (a
 * client that does not trust the CA is refused), know the per-service users, and the services and a provisioner
 * started with their generated connection files and environment file take a cluster to active.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import anyTest, { type TestFn } from "ava";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { buckets, inboxPrefixOf, kvStream, splitServerList, streams } from "@corral/contracts";
import { openBucket } from "@corral/shared";
import { ensureNatsServer, freePort, prepareBus } from "@corral/deploy";
import { generateDeployConfig, parseNode, type DeployConfig } from "../src/deploy-config.js";
import { spawnServer, type ServerProcess } from "../src/server-process.js";
import { createProcessSet, startServiceProcess } from "../../test/helpers/processes.js";
import { eventually } from "../../test/helpers/eventually.js";
import { createCluster, createClusterCatalog, waitForStatus } from "../../test/helpers/cluster-fixture.js";

const test = anyTest as TestFn<{ dir: string; config: DeployConfig; servers: ServerProcess[] }>;

test.before(async (t) => {
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-deploy-config-"));
  t.context.servers = [];
  const ports = new Set<number>();
  while (ports.size < 9) ports.add(await freePort());
  const [a, b, c, ...rest] = [...ports];
  const hosts = [a, b, c].map((client, i) => parseNode(`127.0.0.1:${client}:${rest[i]}:${rest[i + 3]}`));
  const out = join(t.context.dir, "out");
  t.context.config = await generateDeployConfig({
    nodes: hosts,
    outDir: out,
    listenHost: "127.0.0.1",
    confDirOf: (node) => join(out, node),
    storeDirOf: (node) => join(t.context.dir, "store", node),
    connectionDir: join(out, "connection"),
  });
  const binary = await ensureNatsServer();
  for (const node of t.context.config.nodes) t.context.servers.push(spawnServer(binary, ["-c", node.confFile]));
  // A node's /healthz answers 200 once it has joined the cluster and knows the JetStream meta leader.
  for (const { node } of t.context.config.nodes) {
    await eventually(async () => (await fetch(`http://127.0.0.1:${node.monitorPort}/healthz`).catch(() => undefined))?.ok === true, {
      what: `node ${node.clientPort} healthy`,
      timeoutMs: 30_000,
    });
  }
});
test.after.always(async (t) => {
  await Promise.all(t.context.servers.map((s) => s.terminate(5_000)));
  await rm(t.context.dir, { recursive: true, force: true });
});

/** The nats.url of a generated connection file. */
async function natsUrlOf(file: string): Promise<string> {
  const line = (await readFile(file, "utf8")).split("\n").find((l) => l.startsWith("nats.url="));
  if (!line) throw new Error(`${file} has no nats.url`);
  return line.slice("nats.url=".length);
}

/** Connects with a generated connection file, trusting the generated CA. */
async function connectWith(t: { context: { config: DeployConfig }; teardown(fn: () => unknown): void }, process: keyof DeployConfig["connections"]): Promise<NatsConnection> {
  const { servers, credentials } = splitServerList(await natsUrlOf(t.context.config.connections[process]));
  const nc = await connect({
    servers,
    user: credentials?.user ?? "",
    pass: credentials?.password ?? "",
    tls: { caFile: t.context.config.caFile },
    inboxPrefix: process === "admin" ? "_INBOX" : inboxPrefixOf(process),
  });
  t.teardown(() => nc.close());
  return nc;
}

test.serial("deploy config - three nodes form one JetStream cluster; the bus is set up at three replicas", async (t) => {
  const admin = await connectWith(t, "admin");
  await prepareBus(admin);
  const jsm = await jetstreamManager(admin);
  for (const stream of [streams.tasks, kvStream(buckets.clusters)]) {
    const info = await jsm.streams.info(stream);
    t.is(info.config.num_replicas, 3, stream);
    t.is(info.cluster?.replicas?.length, 2, `${stream} has a leader and two replicas`);
  }
  t.deepEqual(new Set((await jsm.streams.info(streams.tasks)).cluster?.replicas?.map((r) => r.name) ?? []).size, 2);
});

test.serial("deploy config - clients must use TLS and trust the CA; each service's user is limited to its own", async (t) => {
  const { node } = t.context.config.nodes[0]!;
  const info = await new Promise<string>((resolve, reject) => {
    const socket = tcpConnect(node.clientPort, "127.0.0.1");
    socket.once("data", (d) => {
      socket.destroy();
      resolve(d.toString());
    });
    socket.once("error", reject);
  });
  t.regex(info, /"tls_required":true/, "the server asks every client for TLS");
  const untrusted = await t.throwsAsync(connect({ servers: `127.0.0.1:${node.clientPort}`, reconnect: false, timeout: 3_000 }));
  t.regex(untrusted?.message ?? "", /certificate|self.signed|verify/i, "a client that does not trust the CA is refused");

  const gateway = await connectWith(t, "gateway");
  t.regex(await openBucket(gateway, buckets.clusters).then(() => "opened", (err: Error) => err.message), /Permissions Violation/);
  t.regex(await openBucket(gateway, buckets.authKeys).then(() => "opened", (err: Error) => err.message), /^opened$/, "the gateway reads the keys");
  const provisioner = await connectWith(t, "provisioner");
  t.regex(await openBucket(provisioner, buckets.authKeys).then(() => "opened", (err: Error) => err.message), /Permissions Violation/);
});

test.serial("deploy config - the services and a provisioner, each with its connection file and corral.env, take a cluster to active over TLS", async (t) => {
  t.timeout(120_000);
  await prepareBus(await connectWith(t, "admin"));
  const env = Object.fromEntries(
    (await readFile(t.context.config.envFile, "utf8"))
      .split("\n")
      .filter((l) => l && !l.startsWith("#"))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
  const apiPort = await freePort();
  const procs = createProcessSet();
  t.teardown(() => procs.stopAll());
  const start = (process: keyof DeployConfig["connections"], entry: string, extra: Record<string, string> = {}) =>
    procs.start(() =>
      startServiceProcess({
        name: `${process} over TLS`,
        entry,
        env: { ...env, CORRAL_CONFIG: t.context.config.connections[process], CORRAL_METRICS_ENABLED: "false", ...extra },
        readyMsg: `${process} service started`,
      }),
    );
  await Promise.all([
    start("tenancy", "services/tenancy/src/index.ts"),
    start("plugins", "services/plugins/src/index.ts"),
    start("solver", "services/solver/src/index.ts"),
    start("clusters", "services/clusters/src/index.ts"),
    start("gateway", "services/gateway/src/index.ts", { CORRAL_SERVER_HOST: "127.0.0.1", CORRAL_SERVER_PORT: String(apiPort) }),
    start("provisioner", "provisioner/src/index.ts", { CORRAL_PROVISIONER_ID: "tls-p0", CORRAL_PROVISIONER_WORKDIR: join(t.context.dir, "work") }),
  ]);
  const baseUrl = `http://127.0.0.1:${apiPort}/v2`;
  await eventually(async () => (await fetch(`${baseUrl}/status`).catch(() => undefined))?.ok === true, { what: "gateway up", timeoutMs: 30_000 });
  const catalog = await createClusterCatalog(baseUrl, { workers: 2, services: [{ name: "base", actions: { install: "true" } }] });
  const id = await createCluster(baseUrl, catalog, 2);
  await waitForStatus(baseUrl, catalog, id, "active", 60_000);
  t.pass();
});
