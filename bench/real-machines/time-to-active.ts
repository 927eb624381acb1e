/**
 * Time to `active` of clusters of 1, 10 and 50 real nodes: the `docker` provider (one container of
 * corral/node:bookworm per node, flavor 1x256m) and a two-service template run by the `shell` automator over SSH
 * (service `store`: install writes a file, configure writes its config, start starts a `sleep infinity` daemon
 * with setsid and closed descriptors; service `front` the same, requiring `store`). Each cluster is created
 * through REST, followed to `active` (KV watch), checked inside its containers, deleted and followed to
 * `terminated`; every container is gone afterwards. From the plans and the nodes' action histories, the time is
 * split into provider time (CREATE, CONFIRM, DELETE) and automator time (BOOTSTRAP, service actions): busy sums
 * and the critical path (see plan-timing.ts). Writes bench/results/docker-time-to-active.json.
 *
 * Runs nats-server, tenancy, plugins, gateway and one clusters service in this process (test/helpers/system.ts)
 * and one provisioner as a child process (bundled plugins, capacity = the tenant's workers).
 *
 * Run: node --import=tsx bench/real-machines/time-to-active.ts
 * Beside it (node-startup.ts): one container at a time, from `docker run` to its SSH greeting, and the host key
 * generation of the image's entrypoint.
 *
 * Env: BENCH_SIZES ("1x3,10x2,50": node counts, each xN times), BENCH_WORKERS (50), BENCH_TIMEOUT_S (600),
 *      BENCH_STARTUP_SAMPLES (5), BENCH_IMAGE_VARIANT ("": corral/node:bookworm; "ed25519-host-key": the
 *      experiment of image-variant.ts, results in docker-time-to-active-ed25519-host-key.json)
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { buckets, kvKey, type ProvisionerRecord } from "@corral/contracts";
import { openBucket, readValue } from "@corral/shared";
import { api, SUPERADMIN, type Caller } from "../../test/helpers/api.js";
import { containersLabelled, docker, inContainer, removeTenantContainers } from "../../test/helpers/docker-demo.js";
import { ensureDockerForTests } from "../../test/helpers/docker-hosts.js";
import { startProvisionerProcess, type ServiceProcess } from "../../test/helpers/processes.js";
import { startSystem, type TestSystem } from "../../test/helpers/system.js";
import { cpuSeconds, trackClusters, type ClusterTracker } from "../clusters/lib.js";
import { containerCpuSeconds, cpuWindow, loadSnapshot, log, machine, round, totalMemoryGiB, writeResult } from "./lib.js";
import { buildEd25519Variant, removeVariant } from "./image-variant.js";
import { measureNodeStartup } from "./node-startup.js";
import { planTiming, timingSummary, type NodeActionsView, type PlanTiming, type PlanView } from "./plan-timing.js";

const run = promisify(execFile);
const SIZES = (process.env["BENCH_SIZES"] ?? "1x3,10x2,50").split(",").flatMap((spec) => {
  const [n, times = "1"] = spec.split("x");
  return Array.from({ length: Number(times) }, () => Number(n));
});
const WORKERS = Number(process.env["BENCH_WORKERS"] ?? 50);
const TIMEOUT_MS = Number(process.env["BENCH_TIMEOUT_S"] ?? 600) * 1000;
const STARTUP_SAMPLES = Number(process.env["BENCH_STARTUP_SAMPLES"] ?? 5);
/** "ed25519-host-key": the experimental image variant of image-variant.ts instead of corral/node:bookworm. */
const VARIANT = process.env["BENCH_IMAGE_VARIANT"] ?? "";
if (VARIANT !== "" && VARIANT !== "ed25519-host-key") throw new Error(`unknown BENCH_IMAGE_VARIANT ${VARIANT}`);
const OUT = VARIANT ? `docker-time-to-active-${VARIANT}.json` : "docker-time-to-active.json";
const TENANT = `bench-docker-${process.pid}`;
const NETWORK = `corral-bench-${TENANT}`;
const PROVISIONER_ID = "bench-docker-p0";

/** Cheap real work: a file per step, a daemon in its own session with no inherited descriptors. */
function service(name: string, requires: string[]) {
  const dir = "/opt/corral-bench";
  const shell = (script: string) => ({ type: "shell", fields: { script, timeout_s: "120" } });
  return {
    name,
    description: `benchmark service ${name}`,
    ...(requires.length ? { dependencies: { runtime: { requires }, install: { requires } } } : {}),
    provisioner: {
      actions: {
        install: shell(`mkdir -p ${dir} && echo installed > ${dir}/${name}.installed`),
        configure: shell(`echo "service=${name} host=$(hostname -f)" > ${dir}/${name}.conf`),
        start: shell(`setsid sleep infinity </dev/null >/dev/null 2>&1 & echo $! > ${dir}/${name}.pid`),
        stop: shell(`kill $(cat ${dir}/${name}.pid) 2>/dev/null; rm -f ${dir}/${name}.pid; true`),
      },
    },
  };
}

function catalog(image: string) {
  return {
    providers: [{ name: "bench-docker", description: "containers on this machine", providertype: "docker", provisioner: { network: NETWORK } }],
    hardwaretypes: [{ name: "small", description: "1 CPU, 256 MB", providermap: { "bench-docker": { flavor: "1x256m" } } }],
    imagetypes: [{ name: "debian12", description: image, providermap: { "bench-docker": { image, sshuser: "root" } } }],
    services: [service("store", []), service("front", ["store"])],
    clustertemplates: [
      {
        name: "two-services",
        description: "store and front on every node",
        compatibility: { hardwaretypes: ["small"], imagetypes: ["debian12"], services: ["store", "front"] },
        defaults: { services: ["store", "front"], provider: "bench-docker", hardwaretype: "small", imagetype: "debian12", config: {} },
        constraints: { size: { min: 1 } },
        administration: { leaseduration: { initial: 0, max: 0, step: 0 } },
      },
    ],
  };
}

async function must(caller: Caller, sys: TestSystem, method: string, path: string, body?: unknown) {
  const r = await api(sys.baseUrl, method, path, { ...caller, ...(body !== undefined ? { body } : {}) });
  if (r.status !== 200) throw new Error(`${method} ${path}: HTTP ${r.status} ${r.text.slice(0, 500)}`);
  return r.body;
}

async function waitForWorkers(sys: TestSystem, workers: number): Promise<void> {
  const registry = await openBucket(sys.nc, buckets.provisioners);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const record = (await readValue<ProvisionerRecord>(registry, kvKey(PROVISIONER_ID)))?.value;
    if ((record?.usage[TENANT] ?? 0) >= workers) return;
    if (Date.now() > deadline) throw new Error(`only ${record?.usage[TENANT] ?? 0} of ${workers} workers of ${TENANT} running`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Both daemons run and every step's file is there, in each of (at most 5 of) the cluster's containers. */
async function checkInside(containers: string[]): Promise<string[]> {
  const problems: string[] = [];
  for (const c of containers.slice(0, 5)) {
    const out = await inContainer(
      c,
      "for s in store front; do test -f /opt/corral-bench/$s.installed && test -f /opt/corral-bench/$s.conf && kill -0 $(cat /opt/corral-bench/$s.pid) && echo ok; done",
    );
    if (out.split("\n").filter((l) => l === "ok").length !== 2) problems.push(`${c.slice(0, 12)}: ${out.trim()}`);
  }
  return problems;
}

interface Details {
  nodes: NodeActionsView[];
}

async function timings(sys: TestSystem, caller: Caller, id: string): Promise<PlanTiming[]> {
  const plans = (await must(caller, sys, "GET", `/clusters/${id}/plans`)) as PlanView[];
  const { nodes } = (await must(caller, sys, "GET", `/clusters/${id}`)) as Details;
  return plans.map((p) => planTiming(p, nodes)).reverse();
}

/** Pids of the Docker daemons (dockerd, containerd): container creation and removal is their work. */
async function dockerDaemonPids(): Promise<number[]> {
  const out = await run("pidof", ["dockerd", "containerd"]).then((r) => r.stdout).catch(() => "");
  return out.split(/\s+/).filter(Boolean).map(Number);
}

const sumCpu = (pids: number[]) => pids.reduce((a, pid) => a + cpuSeconds(pid), 0);

async function runOne(sys: TestSystem, tracker: ClusterTracker, provisioner: ServiceProcess, admin: Caller, nodes: number, n: number) {
  const loadBefore = await loadSnapshot();
  const daemons = await dockerDaemonPids();
  const machineCpu = cpuWindow();
  const cpu0 = { provisioner: cpuSeconds(provisioner.pid), nats: cpuSeconds(sys.nats.pid), daemons: sumCpu(daemons) };
  const requestedAt = Date.now();
  const { id } = (await must(admin, sys, "POST", "/clusters", { name: `b${n}`, clusterTemplate: "two-services", numMachines: nodes })) as { id: string };
  const answeredAt = Date.now();
  const activeAt = await tracker.waitAll([id], "active", TIMEOUT_MS);
  const containers = await containersLabelled("corral.cluster", id);
  if (containers.length !== nodes) throw new Error(`cluster ${id}: ${containers.length} containers for ${nodes} nodes`);
  const inside = await checkInside(containers);
  if (inside.length) throw new Error(`cluster ${id}: services not running: ${inside.join("; ")}`);
  const nodeCpu = containerCpuSeconds(containers);
  const machineUse = machineCpu();
  const ours = {
    provisionerProcess: round(cpuSeconds(provisioner.pid) - cpu0.provisioner, 2),
    natsServer: round(cpuSeconds(sys.nats.pid) - cpu0.nats, 2),
    benchProcess: machineUse.thisProcessCpuSeconds,
    nodeContainers: round(nodeCpu, 2),
    dockerdAndContainerd: round(sumCpu(daemons) - cpu0.daemons, 2),
  };
  const cpuToActive = {
    ...ours,
    nodeContainersPerNode: round(nodeCpu / nodes, 2),
    machineBusy: machineUse.machineBusyCpuSeconds,
    machineBusyPercent: machineUse.machineBusyPercent,
    restOfMachine: round(Math.max(0, machineUse.machineBusyCpuSeconds - Object.values(ours).reduce((a, b) => a + b, 0)), 2),
  };
  const loadAtActive = await loadSnapshot();

  const deleteAt = Date.now();
  await must(admin, sys, "DELETE", `/clusters/${id}`);
  const terminatedAt = await tracker.waitAll([id], "terminated", TIMEOUT_MS);
  const left = await containersLabelled("corral.cluster", id);
  if (left.length) throw new Error(`cluster ${id}: ${left.length} containers left after delete`);
  const [create, ...rest] = await timings(sys, admin, id);
  const del = rest.at(-1);
  if (!create || !del) throw new Error(`cluster ${id}: expected a create and a delete plan`);
  const s = (ms: number) => round(ms / 1000, 2);
  const result = {
    nodes,
    clusterId: id,
    secondsToActive: s(activeAt - requestedAt),
    createRequestAnsweredSeconds: s(answeredAt - requestedAt),
    create: {
      ...timingSummary(create),
      beforeFirstTaskSeconds: s(create.firstStart - requestedAt),
      afterLastTaskSeconds: s(activeAt - create.lastEnd),
    },
    secondsToTerminated: s(terminatedAt - deleteAt),
    delete: { ...timingSummary(del), beforeFirstTaskSeconds: s(del.firstStart - deleteAt), afterLastTaskSeconds: s(terminatedAt - del.lastEnd) },
    cpuSecondsToActive: cpuToActive,
    load: { before: loadBefore, atActive: loadAtActive, afterDelete: await loadSnapshot() },
  };
  log(
    `${nodes} nodes: active in ${result.secondsToActive} s (provider path ${result.create.providerSeconds.criticalPathRunning} s, automator path ${result.create.automatorSeconds.criticalPathRunning} s), terminated in ${result.secondsToTerminated} s`,
  );
  return result;
}

type RunResult = Awaited<ReturnType<typeof runOne>>;

const IMAGE = VARIANT ? await buildEd25519Variant() : await ensureDockerForTests();
const load0 = await loadSnapshot();
log(`sizes ${SIZES.join(", ")}; load ${load0.loadAverage1m5m15m.join(" ")}, ${load0.runningContainers} containers running`);
const nodeStartup = await measureNodeStartup(STARTUP_SAMPLES, IMAGE);
log(`node startup: ${JSON.stringify(nodeStartup)}`);
const sys = await startSystem({ clusters: 1, provisioners: 0, requestTimeoutMs: 30_000 });
const workDir = await mkdtemp(join(tmpdir(), "corral-bench-docker-"));
let provisioner: ServiceProcess | undefined;
try {
  const registry = await openBucket(sys.nc, buckets.provisioners);
  provisioner = await startProvisionerProcess({
    natsUrl: sys.nats.url,
    id: PROVISIONER_ID,
    capacity: WORKERS,
    workDir,
    logLevel: "warn",
    ready: async () => (await readValue(registry, kvKey(PROVISIONER_ID))) !== undefined,
  });
  await must(SUPERADMIN, sys, "POST", "/tenants", { tenant: { name: TENANT, workers: WORKERS } });
  const admin: Caller = { user: "admin", tenant: TENANT };
  await must(admin, sys, "POST", "/import", catalog(IMAGE));
  await waitForWorkers(sys, WORKERS);
  const tracker = await trackClusters(sys.nc);
  const runs: RunResult[] = [];
  for (const [i, nodes] of SIZES.entries()) runs.push(await runOne(sys, tracker, provisioner, admin, nodes, i));
  tracker.stop();
  const bySize = [...new Set(SIZES)].map((nodes) => {
    const mine = runs.filter((r) => r.nodes === nodes);
    const med = (f: (r: RunResult) => number) => [...mine.map(f)].sort((a, b) => a - b)[Math.floor(mine.length / 2)] ?? 0;
    return {
      nodes,
      runs: mine.length,
      secondsToActive: mine.map((r) => r.secondsToActive),
      medianSecondsToActive: med((r) => r.secondsToActive),
      medianProviderCriticalPathSeconds: med((r) => r.create.providerSeconds.criticalPathRunning),
      medianAutomatorCriticalPathSeconds: med((r) => r.create.automatorSeconds.criticalPathRunning),
      medianDispatchWaitSeconds: med((r) => r.create.providerSeconds.criticalPathDispatchWait + r.create.automatorSeconds.criticalPathDispatchWait),
      medianProviderBusySeconds: med((r) => r.create.providerSeconds.busySum),
      medianAutomatorBusySeconds: med((r) => r.create.automatorSeconds.busySum),
      secondsToTerminated: mine.map((r) => r.secondsToTerminated),
    };
  });
  writeResult(OUT, {
    date: new Date().toISOString(),
    machine: `${machine()}; ${totalMemoryGiB()} GiB; the node containers and dockerd run on the same cores`,
    loadBefore: load0,
    loadAfter: await loadSnapshot(),
    configuration: {
      ...(VARIANT ? { experiment: "image variant: the entrypoint makes only an Ed25519 host key (see bench/real-machines/image-variant.ts)" } : {}),
      provider: `docker, flavor 1x256m, image ${IMAGE}, one user-defined bridge network`,
      template: "two-services: store and front on every node, front requires store (install and runtime); shell actions install (write a file), configure (write a file), start (setsid sleep infinity, descriptors closed)",
      provisioner: `one child process, capacity ${WORKERS}, bundled plugins; the tenant has ${WORKERS} workers`,
      inThisProcess: "nats-server (own process), tenancy, plugins, gateway, one clusters service, the REST client and the KV watch",
      cpu: "cpuSecondsToActive: from the create request to active; nodeContainers from the containers' cgroups (sshd, host key generation, the actions); restOfMachine is what none of ours used (other engineers' tests, kernel work not charged to a process)",
      timing: "busySum: the tasks' durations added up; criticalPath: stages are sequential, each stage's wall time goes to the kind of its last-ending task, split into dispatchWait (previous stage's end to this stage's first start) and running",
    },
    bySize,
    nodeStartup,
    runs,
  });
} finally {
  await provisioner?.stop(10_000).catch(() => undefined);
  await sys.stop().catch(() => undefined);
  await removeTenantContainers(TENANT, NETWORK);
  await docker(["network", "rm", NETWORK]).catch(() => "");
  await rm(workDir, { recursive: true, force: true });
  if (VARIANT) await removeVariant(IMAGE);
}
process.exit(0);
