/**
 * `npm start` as a newcomer runs it (deploy/src/launcher.ts), on a fresh data dir and again on the same one.
 * Issue 10: the embedded servers require the credentials made at the first start, every service and the local
 * provisioner use them, the provisioner's cannot read the signing keys, and the first start prints one line per
 * step and no stack traces.
 */
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import anyTest, { type TestFn } from "ava";
import { connect } from "@nats-io/transport-node";
import { buckets, inboxPrefixOf, PROVISIONER_INBOX_PREFIX } from "@corral/contracts";
import { connectNats, openBucket } from "@corral/shared";
import { CORRAL_SERVICES, freePort } from "@corral/deploy";
import { createCluster, createClusterCatalog, waitForStatus } from "../../test/helpers/cluster-fixture.js";
import { startLauncher, type Launcher } from "../../test/helpers/launcher.js";
import { api, SUPERADMIN } from "../../test/helpers/api.js";
import { createProcessSet, startServiceProcess } from "../../test/helpers/processes.js";
import { rawRedisAnswer } from "../../test/helpers/raw-redis.js";
import { scrape, valueOf } from "../../test/helpers/prometheus-text.js";

/** `running` is a holder: ava gives each test a shallow copy of the context, so a field set by one test is lost. */
const test = anyTest as TestFn<{ parent: string; dataDir: string; apiPort: number; running: { launcher?: Launcher } }>;

test.before(async (t) => {
  t.context.parent = await mkdtemp(join(tmpdir(), "corral-launcher-"));
  t.context.dataDir = join(t.context.parent, "data");
  t.context.apiPort = await freePort();
  t.context.running = {};
});
test.after.always(async (t) => {
  await t.context.running?.launcher?.stop();
  if (t.context.parent) await rm(t.context.parent, { recursive: true, force: true });
});

async function setting(file: string, key: string): Promise<string> {
  const line = (await readFile(file, "utf8")).split("\n").find((l) => l.startsWith(`${key}=`));
  if (!line) throw new Error(`${file} has no ${key}`);
  return line.slice(key.length + 1);
}

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;
const bare = (url: string) => url.replace(/\/\/[^@/]*@/, "//");

test.serial("launcher - a first start makes credentials, requires them on both servers, and prints one line per step", async (t) => {
  const { dataDir, apiPort } = t.context;
  const launcher = (t.context.running.launcher = await startLauncher({ dataDir, apiPort }));
  const steps = [
    "made new bus credentials in",
    "starting nats-server on 127.0.0.1",
    "nats-server ready at",
    "starting redis-server on 127.0.0.1",
    "redis-server ready at",
    "connection settings for services and provisioners started by hand",
    "creating the JetStream streams, buckets and object stores",
    "starting auth, clusters, gateway",
    "ready: the API is up at",
  ];
  const launcherLines = launcher.lines.filter((l) => l.startsWith("[launcher]"));
  const positions = steps.map((step) => launcherLines.findIndex((l) => l.includes(step)));
  t.deepEqual(
    positions.map((p, i) => (p < 0 ? `missing: ${steps[i]}` : "ok")),
    steps.map(() => "ok"),
    launcherLines.join("\n"),
  );
  t.deepEqual([...positions].sort((a, b) => a - b), positions, "the steps come in order");

  t.is(await modeOf(dataDir), 0o700);
  for (const file of ["credentials.json", "admin.properties", ...CORRAL_SERVICES.map((s) => `${s}.properties`), "provisioner.properties"]) {
    t.is(await modeOf(join(dataDir, file)), 0o600, file);
  }
  const servicesFile = join(dataDir, "metrics.properties");
  const natsUrl = await setting(servicesFile, "nats.url");
  const redisUrl = await setting(servicesFile, "redis.url");

  const refused = await t.throwsAsync(connect({ servers: bare(natsUrl), reconnect: false }));
  t.regex(refused?.message ?? "", /authorization violation/i, "nats-server refuses a client without credentials");
  t.regex(await rawRedisAnswer(Number(new URL(redisUrl).port), "GET anything"), /^-NOAUTH/, "redis-server wants the password");

  const credentials = JSON.parse(await readFile(join(dataDir, "credentials.json"), "utf8")) as Record<string, any>;
  const logins = [credentials["admin"], ...CORRAL_SERVICES.map((s) => credentials["services"][s]), credentials["provisioner"]];
  const secrets = [...logins.map((l) => l.password), credentials["redisPassword"]] as string[];
  const output = launcher.lines.join("\n");
  for (const secret of secrets) t.false(output.includes(secret), "no password is printed");
  t.false(/^\s+at /m.test(output) || output.includes('"stack"'), `no stack trace on a first start:\n${output}`);
});

test.serial("launcher - the provisioner credentials cannot read the signing keys, the gateway's not the clusters bucket; services and provisioner take a cluster to active", async (t) => {
  const { dataDir, apiPort } = t.context;
  const services = await connectNats({ url: await setting(join(dataDir, "auth.properties"), "nats.url"), name: "test-auth", inboxPrefix: inboxPrefixOf("auth") });
  t.teardown(() => services.close());
  await (await openBucket(services, buckets.authKeys)).put("key1", "signing-secret");
  const provisioner = await connectNats({
    url: await setting(join(dataDir, "provisioner.properties"), "nats.url"),
    name: "test-provisioner",
    inboxPrefix: PROVISIONER_INBOX_PREFIX,
  });
  t.teardown(() => provisioner.close());
  const err = await t.throwsAsync(openBucket(provisioner, buckets.authKeys));
  t.regex(err?.message ?? "", /Permissions Violation/);
  const gateway = await connectNats({
    url: await setting(join(dataDir, "gateway.properties"), "nats.url"),
    name: "test-gateway",
    inboxPrefix: inboxPrefixOf("gateway"),
  });
  t.teardown(() => gateway.close());
  const refused = await t.throwsAsync(openBucket(gateway, buckets.clusters));
  t.regex(refused?.message ?? "", /Permissions Violation/, "the gateway's user cannot read the clusters service's bucket");

  const baseUrl = `http://127.0.0.1:${apiPort}/v2`;
  const catalog = await createClusterCatalog(baseUrl, {
    workers: 2,
    services: [{ name: "base", actions: { install: "true", start: "true" } }],
  });
  const id = await createCluster(baseUrl, catalog, 2);
  await waitForStatus(baseUrl, catalog, id, "active", 60_000);
  t.pass();
});

test.serial("launcher - every process serves Prometheus metrics on the port the launcher printed for it", async (t) => {
  const lines = t.context.running.launcher?.lines ?? [];
  const announced = lines.find((l) => l.startsWith("[launcher] metrics (Prometheus"));
  t.truthy(announced, lines.join("\n"));
  const ports = Object.fromEntries([...(announced ?? "").matchAll(/(\w+) (\d+)(?:,|$)/g)].map((m) => [m[1], Number(m[2])]));
  t.deepEqual(Object.keys(ports).sort(), ["auth", "clusters", "gateway", "metrics", "plugins", "provisioner", "solver", "tenancy", "webhooks"]);
  t.is(new Set(Object.values(ports)).size, 9, "a port each");
  for (const [process, port] of Object.entries(ports)) {
    const scraped = await scrape(`http://127.0.0.1:${port}/metrics`);
    t.true(valueOf(scraped, "process_resident_memory_bytes") > 0, `${process} reports process metrics`);
    t.true(
      lines.some((l) => l.includes(`"msg":"${process} service started"`) && l.includes(`"metrics":"http://127.0.0.1:${port}/metrics"`)),
      `${process} logs its metrics URL`,
    );
  }
  // The cluster of the test before is active, and its tasks ran.
  const clusters = await scrape(`http://127.0.0.1:${ports["clusters"]}/metrics`);
  t.true(valueOf(clusters, "corral_clusters", { status: "active" }) >= 1);
  t.true(
    valueOf(clusters, "corral_task_duration_seconds_count", { task: "CREATE", outcome: "completed" }) >= 2,
    JSON.stringify(clusters.samples.filter((s) => s.name.startsWith("corral_"))),
  );
  const gateway = await scrape(`http://127.0.0.1:${ports["gateway"]}/metrics`);
  t.true(valueOf(gateway, "corral_http_request_duration_seconds_count", { method: "POST", route: "/clusters", status: "200" }) >= 1);
  const provisioner = await scrape(`http://127.0.0.1:${ports["provisioner"]}/metrics`);
  t.true(valueOf(provisioner, "corral_provisioner_worker_loops") >= 1, "the local provisioner runs worker loops");
});

/** The pid each service logged when it started, in the order of the lines. */
function startedPids(lines: readonly string[]): Array<{ service: string; pid: number }> {
  return lines.flatMap((line) => {
    if (!line.startsWith("{")) return [];
    const record = JSON.parse(line) as { service?: string; pid?: number; msg?: string };
    return record.service && record.pid && record.msg === `${record.service} service started` ? [{ service: record.service, pid: record.pid }] : [];
  });
}

test.serial("launcher - auth, metrics, plugins and webhooks share one process, which the launcher restarts as one", async (t) => {
  const launcher = t.context.running.launcher!;
  const shared = ["auth", "metrics", "plugins", "webhooks"];
  t.true(launcher.lines.includes("[launcher] auth, metrics, plugins and webhooks share one process (launcher.sharedProcess)"), launcher.lines.join("\n"));
  const first = startedPids(launcher.lines);
  const pidOf = (service: string) => first.find((s) => s.service === service)?.pid;
  const sharedPid = pidOf("auth")!;
  t.deepEqual(shared.map(pidOf), shared.map(() => sharedPid), "one pid for the four");
  for (const alone of ["gateway", "tenancy", "clusters", "solver"]) t.not(pidOf(alone), sharedPid, `${alone} runs alone`);

  const seen = launcher.lines.length;
  process.kill(sharedPid, "SIGKILL");
  await waitUntil(() => {
    const again = startedPids(launcher.lines.slice(seen));
    return shared.every((service) => again.some((s) => s.service === service));
  }, 60_000);
  const again = startedPids(launcher.lines.slice(seen));
  const restartedPid = again[0]!.pid;
  t.not(restartedPid, sharedPid);
  t.deepEqual(shared.map((service) => again.find((s) => s.service === service)?.pid), shared.map(() => restartedPid));
  t.true(launcher.lines.some((l) => l.startsWith("[launcher] auth+metrics+plugins+webhooks was killed by SIGKILL")));
  // The restarted plugins service answers through the API (plugin types come from it).
  const types = await api(`http://127.0.0.1:${t.context.apiPort}/v2`, "GET", "/plugins/providertypes", SUPERADMIN);
  t.is(types.status, 200, types.text);
});

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test.serial("launcher - a service started by hand with CORRAL_CONFIG=solver.properties connects", async (t) => {
  const procs = createProcessSet();
  t.teardown(() => procs.stopAll());
  const solver = await procs.start(() =>
    startServiceProcess({
      name: "solver by hand",
      entry: "services/solver/src/index.ts",
      env: { CORRAL_CONFIG: join(t.context.dataDir, "solver.properties") },
      readyMsg: "solver service started",
    }),
  );
  t.true(solver.isAlive());
});

test.serial("launcher - a restart keeps the credentials; stopping exits 0", async (t) => {
  const { dataDir, apiPort } = t.context;
  const before = await readFile(join(dataDir, "credentials.json"), "utf8");
  t.is(await t.context.running.launcher?.stop(), 0);
  const launcher = (t.context.running.launcher = await startLauncher({ dataDir, apiPort }));
  t.true(launcher.lines.some((l) => l.includes("using the bus credentials in")));
  t.is(await readFile(join(dataDir, "credentials.json"), "utf8"), before);
  const nc = await connectNats({ url: await setting(join(dataDir, "admin.properties"), "nats.url"), name: "after-restart" });
  await nc.close();
  t.is(await launcher.stop(), 0);
});
