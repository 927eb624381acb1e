/**
 * Issue 14: `npm start` (its own nats-server and redis-server, a NATS user per service) with `instances.<process>=2` for every process runs and supervises two of each (two local
 * provisioners too). The gateways share the API port (uWebSockets.js listens with SO_REUSEPORT on Linux, so the
 * kernel spreads new connections over both); each instance has a metrics port of its own and says which instance
 * it is in every log line. After a SIGKILL of one instance of every process the system goes on creating and
 * deleting clusters, and the launcher restarts each killed instance.
 */
import { request } from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import { METRICS_PROCESSES, envNameOf, instancesKey, loadConfig, metricsPortKey, type MetricsProcess } from "@corral/shared";
import { freePort } from "@corral/deploy";
import { instancesOf } from "../src/instances.js";
import { assignMetricsPorts } from "../src/metrics-ports.js";
import { api, SUPERADMIN } from "../../test/helpers/api.js";
import { createCluster, createClusterCatalog, waitForStatus, type ClusterCatalog } from "../../test/helpers/cluster-fixture.js";
import { eventually } from "../../test/helpers/eventually.js";
import { startLauncher, type Launcher } from "../../test/helpers/launcher.js";
import { scrape, valueOf } from "../../test/helpers/prometheus-text.js";

interface Running {
  launcher?: Launcher;
  dir?: string;
}
const test = anyTest as TestFn<{ running: Running }>;

test.before((t) => {
  t.context.running = {};
});
test.after.always(async (t) => {
  const r = t.context.running;
  await r.launcher?.stop();
  if (r.dir) await rm(r.dir, { recursive: true, force: true });
});

/** A `"<process> service started"` line of one instance. */
interface Started {
  process: string;
  instance: string;
  pid: number;
}

function startedLines(lines: readonly string[]): Started[] {
  const out: Started[] = [];
  for (const line of lines) {
    if (!line.startsWith("{") || !line.includes(" service started")) continue;
    const record = JSON.parse(line) as { service: string; instance?: string; pid?: number; msg: string };
    if (record.msg === `${record.service} service started` && record.instance !== undefined && record.pid !== undefined) {
      out.push({ process: record.service, instance: record.instance, pid: record.pid });
    }
  }
  return out;
}

/** GET /status over a connection of its own each time (no keep-alive), so the kernel picks a listener each time. */
function statusOnNewConnection(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/status", agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Create, active, delete, terminated: a cluster's whole life through the API. */
async function clusterLife(t: ExecutionContext, baseUrl: string, catalog: ClusterCatalog): Promise<void> {
  const id = await createCluster(baseUrl, catalog, 2);
  await waitForStatus(baseUrl, catalog, id, "active", 60_000);
  const deleted = await api(baseUrl, "DELETE", `/clusters/${id}`, catalog.admin);
  t.is(deleted.status, 200, deleted.text);
  await waitForStatus(baseUrl, catalog, id, "terminated", 60_000);
}

test("metrics ports - instance N of a process gets its port plus N blocks of one port per process", async (t) => {
  const base = await freePort();
  const env = { [envNameOf(metricsPortKey("gateway"))]: String(base), [envNameOf(metricsPortKey("tenancy"))]: String(base + 1) };
  const entry = (name: string) => ({ name, entry: `services/${name}/src/index.ts` });
  const instances = instancesOf([entry("gateway"), entry("tenancy")], () => 2);
  const ports = await assignMetricsPorts(loadConfig({ env }), instances);
  t.deepEqual(
    ports.map((p) => [p.name, p.port]),
    [
      ["gateway#0", base],
      ["gateway#1", base + METRICS_PROCESSES.length],
      ["tenancy#0", base + 1],
      ["tenancy#1", base + 1 + METRICS_PROCESSES.length],
    ],
  );
});

test("metrics ports - a port chosen for a process is never the API's or the token server's", async (t) => {
  // Configured metrics ports that equal the API's and the token server's ports (free now: nothing listens yet).
  const api = await freePort();
  const token = await freePort();
  const env = {
    [envNameOf("server.port")]: String(api),
    [envNameOf("security.auth.server.bind.port")]: String(token),
    [envNameOf(metricsPortKey("gateway"))]: String(api),
    [envNameOf(metricsPortKey("tenancy"))]: String(token),
  };
  const entry = (name: string) => ({ name, entry: `services/${name}/src/index.ts` });
  const ports = await assignMetricsPorts(loadConfig({ env }), instancesOf([entry("gateway"), entry("tenancy")], () => 1));
  for (const { name, port, configured } of ports) {
    t.false(port === api || port === token, `${name} got ${port}`);
    t.true(configured === api || configured === token, `${name} says which port it did not get`);
  }
});

test("instances - two of every process: the gateways share the API port, and a SIGKILL of one of each loses nothing", async (t) => {
  t.timeout(300_000);
  const r = t.context.running;
  r.dir = await mkdtemp(join(tmpdir(), "corral-instances-"));
  const apiPort = await freePort();
  const settings: Record<string, string> = {};
  for (const process of METRICS_PROCESSES) {
    settings[envNameOf(instancesKey(process))] = "2";
    settings[envNameOf(metricsPortKey(process))] = "0";
  }
  const launcher = (r.launcher = await startLauncher({ dataDir: join(r.dir, "data"), apiPort, env: settings, provisioners: 2, timeoutMs: 150_000 }));
  const { lines } = launcher;
  const output = () => lines.filter((l) => l.startsWith("[launcher]")).join("\n");

  // Two of each, each saying which it is; a metrics port each.
  const started = await eventually(
    () => {
      const found = startedLines(lines);
      return found.length >= 2 * METRICS_PROCESSES.length && found;
    },
    { what: "every instance to start", timeoutMs: 60_000, intervalMs: 200 },
  );
  const pidOf = new Map(started.map((s) => [`${s.process}#${s.instance}`, s.pid]));
  t.deepEqual([...pidOf.keys()].sort(), METRICS_PROCESSES.flatMap((p) => [`${p}#0`, `${p}#1`]).sort());
  const announced = lines.find((l) => l.startsWith("[launcher] metrics (Prometheus")) ?? "";
  const metricsPorts = new Map([...announced.matchAll(/(\w+#\d) (\d+)/g)].map((m) => [m[1]!, Number(m[2])]));
  t.is(new Set(metricsPorts.values()).size, 2 * METRICS_PROCESSES.length, announced);
  const gatewayPorts = lines.filter((l) => l.includes('"msg":"gateway listening"')).map((l) => (JSON.parse(l) as { port: number }).port);
  t.deepEqual(gatewayPorts, [apiPort, apiPort], "both gateways listen on the API port");

  // Each provisioner registered under its own id, with a work directory of its own.
  const provisioners = await eventually(
    async () => {
      const res = await api<Array<{ id: string }>>(`http://127.0.0.1:${apiPort}/v2`, "GET", "/provisioners", SUPERADMIN);
      return res.status === 200 && res.body.length === 2 && res.body.map((p) => p.id);
    },
    { what: "two provisioners registered", timeoutMs: 20_000 },
  );
  t.is(new Set(provisioners).size, 2);
  const workDirs = lines.filter((l) => l.includes('"msg":"provisioner started"')).map((l) => (JSON.parse(l) as { workDir: string }).workDir);
  t.is(new Set(workDirs).size, 2, workDirs.join(", "));

  const baseUrl = `http://127.0.0.1:${apiPort}/v2`;
  const catalog = await createClusterCatalog(baseUrl, { workers: 4, services: [{ name: "base", actions: { install: "true", start: "true" } }] });
  await clusterLife(t, baseUrl, catalog);

  // Both gateways take connections on the shared port.
  const served = async (instance: string) =>
    valueOf(await scrape(`http://127.0.0.1:${metricsPorts.get(instance)}/metrics`), "corral_http_request_duration_seconds_count");
  const before = [await served("gateway#0"), await served("gateway#1")];
  for (let i = 0; i < 24; i++) t.is(await statusOnNewConnection(apiPort), 200);
  const after = [await served("gateway#0"), await served("gateway#1")];
  t.log(`requests served by gateway#0 and gateway#1: ${after[0]! - before[0]!}, ${after[1]! - before[1]!}`);
  t.true(after[0]! > before[0]! && after[1]! > before[1]!, `both gateways served: ${before} -> ${after}`);

  // SIGKILL instance 0 of every process; the system goes on, and the launcher restarts each.
  // Once the launcher has seen them die: a request the test had sent on a kept-alive connection to the killed gateway
  // would fail with it (as any client's in flight at a SIGKILL), and that is not what this test is about.
  for (const process of METRICS_PROCESSES) globalThis.process.kill(pidOf.get(`${process}#0`)!, "SIGKILL");
  const killed = (process: string) => lines.some((l) => l.startsWith(`[launcher] ${process}#0 was killed by SIGKILL`));
  await eventually(() => METRICS_PROCESSES.every(killed), { what: "the launcher to see every killed instance die", timeoutMs: 10_000 });
  await clusterLife(t, baseUrl, catalog);
  await eventually(
    () => {
      const restarted = new Set(startedLines(lines).filter((s) => s.instance === "0" && s.pid !== pidOf.get(`${s.process}#0`)).map((s) => s.process));
      return METRICS_PROCESSES.every((p: MetricsProcess) => restarted.has(p));
    },
    { what: "the launcher to restart every killed instance", timeoutMs: 60_000, intervalMs: 200 },
  ).catch((err: Error) => t.fail(`${err.message}\n${output()}`));
  for (const process of METRICS_PROCESSES) {
    t.true(lines.some((l) => l.startsWith(`[launcher] ${process}#0 restarted (pid `)), `${process}#0: the launcher restarted it`);
    t.false(lines.some((l) => l.startsWith(`[launcher] ${process}#1 `)), `${process}#1 ran on untouched`);
  }
  // And a cluster once more, with the restarted instances among the living.
  await clusterLife(t, baseUrl, catalog);
});
