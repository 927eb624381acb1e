/**
 * What node health checks cost (docs/providers.md, Node health), per 1,000 nodes. Run alone (it measures the
 * machine's CPU):
 *   node --import=tsx bench/provisioner/health.ts                  -> bench/results/provisioner-health.json
 *   BENCH_SMOKE=1 node --import=tsx bench/provisioner/health.ts    -> bench/results/provisioner-health-smoke.json
 * Settings: BENCH_SIM_NODES (comma separated, default 1000,5000), BENCH_DOCKER_NODES (default 50), BENCH_ROUNDS
 * (default 10), BENCH_CLUSTER_SIZE (nodes per cluster, default 100).
 *
 * One provisioner (in this process, its own NATS connection) checks one tenant's nodes; its rounds are run by hand
 * (`health.runRound()`, the timer is off). The nodes' targets are written to `corral_health_targets` beforehand, as
 * workers write them after CONFIRM (each write timed: the cost a checked node adds to its CREATE and CONFIRM).
 * - `sim`: provider field `health_check`, answered without I/O: what the checking costs around the provider (the
 *   targets' watch, a cluster record read per cluster, batching, diffing, reports).
 * - `docker`: containers of the node image made by the docker provider's CREATE; a round is one listing of the
 *   installation's containers per Docker host, plus the same work around it.
 * Per scenario: the time of a round with nothing changed (median, p90), the process's and the machine's CPU per
 * round, and a round in which every node changed (every node reported: messages and bytes on the bus).
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { NatsConnection } from "@nats-io/transport-node";
import { startNats, type NatsHandle } from "@corral/deploy";
import { ASSIGNMENT_KEY, buckets, decode, encode, healthReportSubject, kvKey, type HealthTarget, type NodeHealthCheck, type NodeHealthReport } from "@corral/contracts";
import { connectNats, ensureStreams, mapLimit, openBucket, putValue, silentLogger } from "@corral/shared";
import { createSimProvider, startProvisioner, type Plugin, type RunningProvisioner } from "@corral/provisioner";
import { ClusterKeys, createDockerProvider, DockerClient, LABEL, labelTerm, SshPool } from "@corral/provisioner/testing";
import { createTestNetwork, ensureDockerForTests } from "../../test/helpers/docker-hosts.js";
import { machineCpuSeconds, round } from "../clusters/lib.js";
import { percentile } from "../stats.js";

const exec = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const SMOKE = process.env["BENCH_SMOKE"] === "1";
const OUT = join(here, "../results", SMOKE ? "provisioner-health-smoke.json" : "provisioner-health.json");
const SIM_NODES = (process.env["BENCH_SIM_NODES"] ?? (SMOKE ? "50" : "1000,5000")).split(",").map(Number);
const DOCKER_NODES = Number(process.env["BENCH_DOCKER_NODES"] ?? (SMOKE ? 3 : 50));
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? (SMOKE ? 2 : 10));
const CLUSTER_SIZE = Number(process.env["BENCH_CLUSTER_SIZE"] ?? 100);
const TENANT = "bench-health";
const PROVISIONER = "bench-health-prov";

/** The provisioner's findings: healthy, or (for the all-changed round) unreachable. */
let allChanged = false;
const simFinding = (): NodeHealthCheck => (allChanged ? { state: "unreachable", message: "sim: no answer" } : { state: "healthy", message: "sim: up" });

interface Scenario {
  provider: "sim" | "docker";
  nodes: number;
  /** The targets, written to the bucket by `run`. */
  targets: HealthTarget[];
  plugins?: Plugin[];
}

/** Every report published for the tenant: messages, bytes and node entries. */
function countReports(nc: NatsConnection) {
  const count = { messages: 0, bytes: 0, nodes: 0 };
  const sub = nc.subscribe(healthReportSubject(TENANT), {
    callback: (_err, msg) => {
      count.messages++;
      count.bytes += msg.data.length;
      count.nodes += decode<NodeHealthReport>(msg.data).nodes.length;
    },
  });
  return { count, stop: () => sub.unsubscribe() };
}

const quantile = (values: number[], q: number) => percentile([...values].sort((a, b) => a - b), q * 100);

/** CPU seconds of one process so far (user + system), from /proc. */
function processCpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

async function measure(nats: NatsHandle, scenario: Scenario) {
  const nc = await connectNats({ url: nats.url, name: "bench-health" });
  const pnc = await connectNats({ url: nats.url, name: "bench-health-provisioner" });
  const workDir = mkdtempSync(join(tmpdir(), "corral-bench-health-"));
  let provisioner: RunningProvisioner | undefined;
  try {
    await ensureStreams(nc);
    const clusters = await openBucket(nc, buckets.clusters);
    for (const clusterId of new Set(scenario.targets.map((t) => t.clusterId))) await putValue(clusters, kvKey(clusterId), { tenant: TENANT, status: "active" });
    const targets = await openBucket(nc, buckets.healthTargets);
    const writes: number[] = [];
    await mapLimit(scenario.targets, 32, async (target) => {
      const started = performance.now();
      await putValue(targets, kvKey(target.tenant, target.clusterId, target.nodeId), target);
      writes.push(performance.now() - started);
    });

    provisioner = await startProvisioner({
      nc: pnc,
      log: silentLogger,
      id: PROVISIONER,
      capacity: 1,
      workDir,
      healthIntervalMs: 3_600_000,
      healthFullReportMs: 3_600_000,
      ...(scenario.plugins ? { plugins: scenario.plugins } : {}),
    });
    const health = provisioner.health!;
    const reports = countReports(nc);
    await (await openBucket(nc, buckets.assignments)).put(ASSIGNMENT_KEY, encode({ [PROVISIONER]: { [TENANT]: 1 } }));
    // Rounds until every node was found once (the assignment and the targets' watch arrive meanwhile).
    const loadStarted = performance.now();
    while (reports.count.nodes < scenario.nodes) {
      await health.runRound();
      await nc.flush();
      if (performance.now() - loadStarted > 120_000) throw new Error(`only ${reports.count.nodes} of ${scenario.nodes} nodes reported`);
    }
    const firstReport = { ...reports.count };

    const durations: number[] = [];
    const cpu0 = process.cpuUsage();
    const machine0 = machineCpuSeconds();
    const nats0 = processCpuSeconds(nats.pid);
    for (let i = 0; i < ROUNDS; i++) {
      const started = performance.now();
      await health.runRound();
      durations.push(performance.now() - started);
    }
    const cpu = process.cpuUsage(cpu0);
    const machine1 = machineCpuSeconds();
    const natsCpu = processCpuSeconds(nats.pid) - nats0;
    const unchangedReports = reports.count.messages - firstReport.messages;

    allChanged = true;
    if (scenario.provider === "docker") {
      const ids = (await new DockerClient({ socketPath: "/var/run/docker.sock" }).listContainers([labelTerm(LABEL.tenant, TENANT)])).map((c) => c.Id);
      await exec("docker", ["stop", "-t", "0", ...ids]);
    }
    const before = { ...reports.count };
    const changedStarted = performance.now();
    await health.runRound();
    await nc.flush();
    const changedMs = performance.now() - changedStarted;
    allChanged = false;
    reports.stop();

    const median = quantile(durations, 0.5);
    const per1000 = (ms: number) => round((ms / scenario.nodes) * 1000, 1);
    return {
      provider: scenario.provider,
      nodes: scenario.nodes,
      clusters: new Set(scenario.targets.map((t) => t.clusterId)).size,
      targetWriteMs: { median: round(quantile(writes, 0.5), 2), p90: round(quantile(writes, 0.9), 2) },
      roundUnchanged: {
        rounds: ROUNDS,
        ms: { median: round(median, 1), p90: round(quantile(durations, 0.9), 1) },
        msPer1000Nodes: per1000(median),
        processCpuMsPerRound: round((cpu.user + cpu.system) / 1000 / ROUNDS, 1),
        natsServerCpuMsPerRound: round((natsCpu * 1000) / ROUNDS, 1),
        machineCpuMsPerRound: round(((machine1.busy - machine0.busy) * 1000) / ROUNDS, 1),
        reportMessages: unchangedReports,
      },
      roundAllChanged: {
        ms: round(changedMs, 1),
        reportMessages: reports.count.messages - before.messages,
        reportBytes: reports.count.bytes - before.bytes,
        reportBytesPerNode: round((reports.count.bytes - before.bytes) / Math.max(1, reports.count.nodes - before.nodes), 1),
      },
    };
  } finally {
    await provisioner?.stop();
    await pnc.drain().catch(() => {});
    await nc.drain().catch(() => {});
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** Targets of `nodes` sim nodes of the tenant, CLUSTER_SIZE to a cluster. */
function simTargets(nodes: number): HealthTarget[] {
  return Array.from({ length: nodes }, (_, i) => {
    const clusterId = `bench${String(Math.floor(i / CLUSTER_SIZE)).padStart(4, "0")}`;
    const nodenum = 1000 + (i % CLUSTER_SIZE);
    return {
      tenant: TENANT,
      clusterId,
      nodeId: `${clusterId}-${nodenum}`,
      config: {
        hostname: `n${nodenum}.${clusterId}.bench`,
        ipaddresses: { access_v4: `100.64.${(i >> 8) & 255}.${i & 255}`, bind_v4: `10.0.${(i >> 8) & 255}.${i & 255}` },
        nodenum,
        hardwaretype: "small",
        imagetype: "img",
        provider: { name: "sim-checked", providertype: "sim", provisioner: { health_check: "true" } },
        results: { providerid: `sim-${i}`, "ssh-auth": { user: "root", cluster_key: true }, ssh_host_keys: { "ssh-ed25519": "AAAAC3NzaC1lZDI1NTE5AAAAIBench" } },
      },
      recordedAt: Date.now(),
    };
  });
}

/** `nodes` containers made by the docker provider's CREATE on a test network, and their targets. */
async function dockerNodes(nats: NatsHandle, nodes: number): Promise<{ targets: HealthTarget[]; cleanup: () => Promise<void> }> {
  await ensureDockerForTests();
  const network = await createTestNetwork(`corral-bench-health-${process.pid}`);
  const nc = await connectNats({ url: nats.url, name: "bench-health-docker" });
  const clusterKeys = new ClusterKeys(nc);
  const pool = new SshPool({ log: silentLogger });
  const provider = createDockerProvider({ access: { pool, credentials: { workDir: "/nonexistent", clusterKeys } }, nc, log: silentLogger, clusterKeys, reconcileIntervalMs: 0 });
  const clusterId = "benchdkr";
  const targets = await mapLimit(Array.from({ length: nodes }, (_, i) => 1000 + i), 8, async (nodenum) => {
    const config = {
      cluster: {},
      hostname: `n${nodenum}.${clusterId}.bench`,
      ipaddresses: {},
      nodenum,
      hardwaretype: "small",
      imagetype: "img",
      services: [],
      automators: [],
      provider: { name: "docker-bench", providertype: "docker", provisioner: { network: network.name } },
      results: {},
    };
    const task = { tenant: TENANT, clusterId, planId: `${clusterId}-001`, taskId: `${clusterId}-001-${nodenum}`, dispatch: 1, taskName: "CREATE" as const, nodeId: `${clusterId}-${nodenum}`, submitTime: Date.now(), config };
    const created = await provider.create({ task, tenant: TENANT, workDir: "/nonexistent", provisionerId: "bench", workerId: "w", signal: new AbortController().signal, log: silentLogger });
    if (created.status !== 0) throw new Error(`CREATE failed: ${created.stderr}`);
    const target: HealthTarget = { tenant: TENANT, clusterId, nodeId: task.nodeId, config: { ...config, results: { ...created.result } }, recordedAt: Date.now() };
    return target;
  });
  return {
    targets,
    async cleanup() {
      const docker = new DockerClient({ socketPath: "/var/run/docker.sock" });
      await mapLimit(await docker.listContainers([labelTerm(LABEL.tenant, TENANT)]), 8, (c) => docker.removeContainer(c.Id));
      await provider.close?.();
      await network.remove();
      await nc.drain().catch(() => {});
    },
  };
}

const scenarios = [];
for (const nodes of SIM_NODES) {
  const nats = await startNats({ jetstream: true, syncAlways: true });
  try {
    scenarios.push(await measure(nats, { provider: "sim", nodes, targets: simTargets(nodes), plugins: [createSimProvider({ health: simFinding })] }));
  } finally {
    await nats.stop();
  }
}
if (DOCKER_NODES > 0) {
  const nats = await startNats({ jetstream: true, syncAlways: true });
  const made = await dockerNodes(nats, DOCKER_NODES);
  try {
    scenarios.push(await measure(nats, { provider: "docker", nodes: DOCKER_NODES, targets: made.targets }));
  } finally {
    await made.cleanup();
    await nats.stop();
  }
}

const out = {
  date: new Date().toISOString(),
  machine: `${cpus().length} cores (nats-server and this process share them)`,
  loadAverageAtStart: round(loadavg()[0] ?? 0, 2),
  smoke: SMOKE,
  note:
    "one provisioner checks one tenant; rounds run by hand; roundUnchanged: nothing changed (no report), roundAllChanged: every node found changed and reported (docker: every container stopped before it); msPer1000Nodes is linear from the count measured, so for a small count it also scales the round's fixed part (the Docker listing's own cost) and overstates",
  scenarios,
};
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, JSON.stringify(out, null, 2) + "\n");
console.log(JSON.stringify(out, null, 2));
