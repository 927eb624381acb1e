/**
 * Time to `active` of clusters of 1, 10 and 30 nodes on the `docker` provider, the `ec2` provider against the EC2
 * emulator (test/helpers/ec2-emulator: its instances are containers of the node image) and the `lxd` provider on
 * this machine's LXD (skipped, with the reason, when LXD cannot be had), plus the 50-node `docker` cluster of the
 * target, each against its floor measured in the same run just before it (floors.ts: N machines started 16 at a
 * time until sshd greets; the emulator's machines are Docker containers, so its floor is Docker's).
 *
 * Every cluster is of a one-service template (catalog.ts: `shell` actions install, configure, start on every
 * node), created through REST, followed to `active` (KV watch), checked inside a node, deleted and followed to
 * `terminated`; its machines are gone afterwards. Each provider's first cluster (1 node) is a warm-up, not counted. From the create plan and the nodes' action histories the time is
 * split into provider time (CREATE, CONFIRM) and automator time (BOOTSTRAP, the service actions): the critical
 * path (each stage's wall time goes to the kind of its last task; the wait before a stage's first task started is
 * dispatch) and busy sums (bench/real-machines/plan-timing.ts). Writes bench/results/providers-time-to-active.json.
 *
 * Runs nats-server, tenancy, plugins, gateway and one clusters service in this process (test/helpers/system.ts),
 * one provisioner as a child process loading the bundled plugins (capacity and the tenant's workers: BENCH_WORKERS),
 * and the EC2 emulator in this process. Everything it makes is removed at the end, also after a failure or when
 * the run outlives BENCH_MAX_S.
 *
 * Run: node --import=tsx bench/providers/time-to-active.ts
 * Smoke check: BENCH_SIZES=1,3 BENCH_TARGET_NODES=0 BENCH_OUT=providers-time-to-active-smoke.json node --import=tsx bench/providers/time-to-active.ts
 *
 * Env: BENCH_PROVIDERS ("docker,ec2,lxd"), BENCH_SIZES ("1,10,30"), BENCH_TARGET_NODES (50; 0 skips the target),
 *      BENCH_TARGET_ROUNDS (3: floor and cluster alternated), BENCH_WORKERS (50), BENCH_TIMEOUT_S (300 per cluster),
 *      BENCH_MAX_S (3600 for the whole run), BENCH_OUT ("providers-time-to-active.json"), BENCH_PROFILE_DIR (unset: a
 *      CPU profile of the provisioner is written there when it stops)
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { buckets, kvKey, type ProvisionerRecord } from "@corral/contracts";
import { openBucket, readValue } from "@corral/shared";
import { LXD_NODE_IMAGE } from "../../deploy/src/lxd-image.js";
import { TAG } from "@corral/provider-ec2";
import { api, SUPERADMIN, type Caller } from "../../test/helpers/api.js";
import { inContainer, removeTenantContainers, tenantContainers } from "../../test/helpers/docker-demo.js";
import { createTestNetwork, ensureDockerForTests, removeTestContainers, TEST_LABEL, type TestNetwork } from "../../test/helpers/docker-hosts.js";
import { EMULATOR_AMI, startEc2Emulator, type Ec2Emulator } from "../../test/helpers/ec2-emulator/index.js";
import { ensureLxdForTests, lxcExec, releaseLxdForTests, removeTenantInstances, tenantInstances, type LxdForTests } from "../../test/helpers/lxd.js";
import { startProvisionerProcess, type ServiceProcess } from "../../test/helpers/processes.js";
import { startSystem, type TestSystem } from "../../test/helpers/system.js";
import { cpuSeconds, trackClusters, waitForQuietMachine, type ClusterTracker } from "../clusters/lib.js";
import { cpuWindow, loadSnapshot, log, machine, round, totalMemoryGiB, writeResult } from "../real-machines/lib.js";
import { planTiming, timingSummary, type NodeActionsView, type PlanTiming, type PlanView } from "../real-machines/plan-timing.js";
import { benchCatalog, SERVICE_CHECK, templateOf, type ProviderMapping, type ProviderName } from "./catalog.js";
import { dockerFloor, FLOOR_CONCURRENCY, lxdFloor, type FloorResult } from "./floors.js";
import { median } from "../stats.js";

const run = promisify(execFile);
const list = (name: string, fallback: string) => (process.env[name] ?? fallback).split(",").map((s) => s.trim()).filter(Boolean);
const PROVIDERS = list("BENCH_PROVIDERS", "docker,ec2,lxd") as ProviderName[];
const SIZES = list("BENCH_SIZES", "1,10,30").map(Number);
const TARGET_NODES = Number(process.env["BENCH_TARGET_NODES"] ?? 50);
const TARGET_ROUNDS = Number(process.env["BENCH_TARGET_ROUNDS"] ?? 3);
const TARGET_RATIO = 1.5;
const WORKERS = Number(process.env["BENCH_WORKERS"] ?? 50);
const CLUSTER_TIMEOUT_MS = Number(process.env["BENCH_TIMEOUT_S"] ?? 300) * 1000;
const MAX_MS = Number(process.env["BENCH_MAX_S"] ?? 3600) * 1000;
/** Longest wait for a quiet machine (90% idle for half a second) before a floor or a cluster. */
const SETTLE_MAX_MS = 20_000;
const OUT = process.env["BENCH_OUT"] ?? "providers-time-to-active.json";
/** Where the provisioner writes a CPU profile when it stops (bench/gateway/profile-summary.ts reads it). */
const PROFILE_DIR = process.env["BENCH_PROFILE_DIR"];
for (const p of PROVIDERS) if (!["docker", "ec2", "lxd"].includes(p)) throw new Error(`unknown provider ${p} in BENCH_PROVIDERS`);

const TENANT = `bench-providers-${process.pid}`;
const NETWORK = `corral-bench-${TENANT}`;
const PROVISIONER_ID = "bench-providers-p0";
const FLAVOR = { docker: "1x256m", lxd: "1x512m" } as const;
/** The emulator's polls as the ec2 e2e test sets them: its instances run within a second, unlike EC2's. */
const EC2_TIMING = { CORRAL_EC2_POLL_MS: "200", CORRAL_EC2_MAX_POLL_MS: "1000" };
const EC2_CREDENTIALS = { access_key_id: "AKIABENCHPROVIDERS00", secret_access_key: "bench/providers/never-shown" };

const s = (ms: number) => round(ms / 1000, 2);

// ---- what the run made, removed by cleanUp (also from the watchdog) ----
let sys: TestSystem | undefined;
let provisioner: ServiceProcess | undefined;
let emulator: Ec2Emulator | undefined;
let lxd: LxdForTests | undefined;
let network: TestNetwork | undefined;
let workDir: string | undefined;
let cleaning: Promise<void> | undefined;
/** The machine's fs.inotify.max_user_instances before the run raised it (restored by cleanUp). */
let inotifyInstancesBefore: number | undefined;

function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    const step = async (what: string, fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (err) {
        log(`clean-up: ${what} failed: ${String(err)}`);
      }
    };
    await step("stopping the provisioner", async () => provisioner?.stop(10_000));
    await step("stopping the EC2 emulator", async () => emulator?.stop());
    await step("stopping the system", async () => sys?.stop());
    await step("removing containers", () => removeTenantContainers(TENANT));
    if (lxd) {
      await step("removing LXD instances", () => removeTenantInstances(TENANT));
      await step("releasing LXD", () => releaseLxdForTests());
    }
    if (inotifyInstancesBefore !== undefined) await step("restoring fs.inotify.max_user_instances", () => writeFile(INOTIFY_INSTANCES, `${inotifyInstancesBefore}\n`));
    await step("removing the network", async () => network?.remove());
    await step("removing test containers", () => removeTestContainers());
    if (workDir) await step("removing the work directory", () => rm(workDir!, { recursive: true, force: true }));
  })();
  return cleaning;
}

const watchdog = setTimeout(() => {
  log(`the run took longer than BENCH_MAX_S (${MAX_MS / 1000} s): cleaning up and stopping`);
  void cleanUp().finally(() => process.exit(2));
}, MAX_MS);

async function must(caller: Caller, method: string, path: string, body?: unknown) {
  const r = await api(sys!.baseUrl, method, path, { ...caller, ...(body !== undefined ? { body } : {}) });
  if (r.status !== 200) throw new Error(`${method} ${path}: HTTP ${r.status} ${r.text.slice(0, 500)}`);
  return r.body;
}

async function waitForWorkers(): Promise<void> {
  const registry = await openBucket(sys!.nc, buckets.provisioners);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const record = (await readValue<ProvisionerRecord>(registry, kvKey(PROVISIONER_ID)))?.value;
    if ((record?.usage[TENANT] ?? 0) >= WORKERS) return;
    if (Date.now() > deadline) throw new Error(`only ${record?.usage[TENANT] ?? 0} of ${WORKERS} workers of ${TENANT} running`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A cluster's machines (container ids or instance names) and a command run inside one of them. */
interface Machines {
  ids: string[];
  exec(id: string, command: string): Promise<string>;
  /** How many SSH logins the machine's sshd accepted (its log). */
  sshLogins(id: string): Promise<number>;
}

const countAccepted = (log: string) => log.split("\n").filter((line) => /Accepted (publickey|password)/.test(line)).length;

/** sshd logs to stderr in the node image (`sshd -D -e`), which `docker logs` replays. */
async function dockerLogins(id: string): Promise<number> {
  const out = await run("docker", ["logs", id], { maxBuffer: 16 << 20 }).catch(() => ({ stdout: "", stderr: "" }));
  return countAccepted(out.stdout + out.stderr);
}

const lxdLogins = async (name: string) => countAccepted(await lxcExec(name, "journalctl -u ssh.service --no-pager -q || true").catch(() => ""));

async function machinesOf(provider: ProviderName, clusterId: string): Promise<Machines> {
  if (provider === "docker") return { ids: await tenantContainers(TENANT, { "corral.cluster": clusterId }), exec: inContainer, sshLogins: dockerLogins };
  if (provider === "lxd") return { ids: await tenantInstances(TENANT, { "user.corral.cluster": clusterId }), exec: lxcExec, sshLogins: lxdLogins };
  const ids = emulator!
    .instances()
    .filter((i) => i.tags.get(TAG.tenant) === TENANT && i.tags.get(TAG.cluster) === clusterId && (i.state === "pending" || i.state === "running") && i.containerId)
    .map((i) => i.containerId!);
  return { ids, exec: inContainer, sshLogins: dockerLogins };
}

async function timings(caller: Caller, id: string): Promise<PlanTiming[]> {
  const plans = (await must(caller, "GET", `/clusters/${id}/plans`)) as PlanView[];
  const { nodes } = (await must(caller, "GET", `/clusters/${id}`)) as { nodes: NodeActionsView[] };
  return plans.map((p) => planTiming(p, nodes)).reverse();
}

const INOTIFY_INSTANCES = "/proc/sys/fs/inotify/max_user_instances";
/** What LXD's production setup asks for at least (its default allows about 20 systemd instances). */
const INOTIFY_INSTANCES_FOR_LXD = 1024;

/**
 * Every LXD container's systemd takes inotify instances of one host user (the containers' id range), so the kernel's
 * default of 128 stops the 21st-25th instance at boot ("Failed to allocate manager object: Too many open files").
 * Raised for the run when lower, restored at the end; says what it did.
 */
async function inotifyForLxd(): Promise<string> {
  const now = Number((await readFile(INOTIFY_INSTANCES, "utf8").catch(() => "0")).trim());
  if (now >= INOTIFY_INSTANCES_FOR_LXD) return `fs.inotify.max_user_instances ${now}`;
  try {
    await writeFile(INOTIFY_INSTANCES, `${INOTIFY_INSTANCES_FOR_LXD}\n`);
    inotifyInstancesBefore = now;
    return `fs.inotify.max_user_instances raised from ${now} to ${INOTIFY_INSTANCES_FOR_LXD} for the run (LXD's production setup)`;
  } catch (err) {
    return `fs.inotify.max_user_instances ${now} (could not raise it: ${String(err)}): more than about 20 instances fail to boot`;
  }
}

/**
 * After a failed floor or cluster: the tenant's clusters are deleted (waited for at most two minutes) and whatever
 * is left of the provider's machines is removed directly.
 */
async function removeLeftovers(admin: Caller, provider: ProviderName): Promise<void> {
  try {
    const clusters = (await must(admin, "GET", "/clusters")) as Array<{ id: string; status: string }>;
    for (const c of clusters.filter((c) => c.status !== "terminated")) {
      await api(sys!.baseUrl, "DELETE", `/clusters/${c.id}`, admin);
    }
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const left = ((await must(admin, "GET", "/clusters")) as Array<{ status: string }>).filter((c) => c.status !== "terminated");
      if (!left.length) break;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  } catch (err) {
    log(`deleting the clusters after a failure: ${String(err)}`);
  }
  if (provider === "lxd") await removeTenantInstances(TENANT).catch(() => undefined);
  else await removeTenantContainers(TENANT).catch(() => undefined);
}

/** Before each floor and each cluster: what the run before left (removals, writeback) settles first. */
const settle = () => waitForQuietMachine(SETTLE_MAX_MS);

async function floorOf(provider: ProviderName, nodes: number): Promise<FloorResult> {
  await settle();
  if (provider === "lxd") {
    return lxdFloor(nodes, {
      socketPath: lxd!.socketPath,
      image: lxd!.image,
      network: lxd!.network,
      storagePool: lxd!.storagePool,
      flavor: FLAVOR.lxd,
      config: { "user.corral.tenant": TENANT },
    });
  }
  const [key, value] = TEST_LABEL.split("=") as [string, string];
  return dockerFloor(nodes, {
    image: IMAGE,
    network: NETWORK,
    flavor: FLAVOR.docker,
    label: { [key]: value, "corral.test.pid": String(process.pid), "corral.tenant": TENANT },
  });
}

async function measure(tracker: ClusterTracker, admin: Caller, provider: ProviderName, nodes: number, n: number, floor: FloorResult) {
  const settledMs = await settle();
  const loadBefore = await loadSnapshot();
  const machineCpu = cpuWindow();
  const cpu0 = { provisioner: cpuSeconds(provisioner!.pid), nats: cpuSeconds(sys!.nats.pid) };
  const requestedAt = Date.now();
  const { id } = (await must(admin, "POST", "/clusters", { name: `${provider}-${nodes}-${n}`, clusterTemplate: templateOf(provider), numMachines: nodes })) as { id: string };
  const activeAt = await tracker.waitAll([id], "active", CLUSTER_TIMEOUT_MS);
  const machineUse = machineCpu();
  const cpu = {
    provisionerProcess: round(cpuSeconds(provisioner!.pid) - cpu0.provisioner, 2),
    natsServer: round(cpuSeconds(sys!.nats.pid) - cpu0.nats, 2),
    benchProcess: machineUse.thisProcessCpuSeconds,
    machineBusy: machineUse.machineBusyCpuSeconds,
    machineBusyPercent: machineUse.machineBusyPercent,
  };
  const made = await machinesOf(provider, id);
  if (made.ids.length !== nodes) throw new Error(`${provider} cluster ${id}: ${made.ids.length} machines for ${nodes} nodes`);
  const inside = await made.exec(made.ids[0]!, SERVICE_CHECK);
  if (inside.trim() !== "ok") throw new Error(`${provider} cluster ${id}: the service is not running in ${made.ids[0]}: ${inside}`);
  const sshLoginsOfFirstNode = await made.sshLogins(made.ids[0]!);

  const deleteAt = Date.now();
  await must(admin, "DELETE", `/clusters/${id}`);
  const terminatedAt = await tracker.waitAll([id], "terminated", CLUSTER_TIMEOUT_MS);
  const left = await machinesOf(provider, id);
  if (left.ids.length) throw new Error(`${provider} cluster ${id}: ${left.ids.length} machines left after delete`);
  const [create, ...rest] = await timings(admin, id);
  const del = rest.at(-1);
  if (!create || !del) throw new Error(`${provider} cluster ${id}: expected a create and a delete plan`);
  const secondsToActive = s(activeAt - requestedAt);
  const summary = timingSummary(create);
  const result = {
    provider,
    nodes,
    clusterId: id,
    secondsToActive,
    floorSeconds: floor.seconds,
    ratioToFloor: round(secondsToActive / floor.seconds, 2),
    floor,
    split: {
      providerCriticalPathSeconds: round(summary.providerSeconds.criticalPathRunning, 2),
      automatorCriticalPathSeconds: round(summary.automatorSeconds.criticalPathRunning, 2),
      dispatchWaitSeconds: round(summary.providerSeconds.criticalPathDispatchWait + summary.automatorSeconds.criticalPathDispatchWait, 2),
      beforeFirstTaskSeconds: s(create.firstStart - requestedAt),
      afterLastTaskSeconds: s(activeAt - create.lastEnd),
      providerBusySeconds: summary.providerSeconds.busySum,
      automatorBusySeconds: summary.automatorSeconds.busySum,
    },
    create: summary,
    sshLoginsOfFirstNode,
    settledMs,
    secondsToTerminated: s(terminatedAt - deleteAt),
    delete: { spanSeconds: s(del.spanMs), tasks: del.tasks },
    cpuSecondsToActive: cpu,
    load: { before: loadBefore, atEnd: await loadSnapshot() },
  };
  log(
    `${provider} ${nodes} nodes: active in ${secondsToActive} s, floor ${floor.seconds} s (${result.ratioToFloor}x); provider ${result.split.providerCriticalPathSeconds} s, automator ${result.split.automatorCriticalPathSeconds} s, dispatch ${result.split.dispatchWaitSeconds} s; terminated in ${result.secondsToTerminated} s`,
  );
  return result;
}

type Run = Awaited<ReturnType<typeof measure>>;

const load0 = await loadSnapshot();
const IMAGE = await ensureDockerForTests();
const skipped: Array<{ provider: ProviderName; reason: string }> = [];
let commit = "";
try {
  commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
} catch {
  // not a checkout
}
try {
  log(`providers ${PROVIDERS.join(", ")}; sizes ${SIZES.join(", ")}; target ${TARGET_NODES} x${TARGET_ROUNDS}; load ${load0.loadAverage1m5m15m.join(" ")}, ${load0.runningContainers} containers running`);
  network = await createTestNetwork(NETWORK);
  const mappings: ProviderMapping[] = [];
  let lxdHost = "";
  if (PROVIDERS.includes("docker") || TARGET_NODES > 0) {
    mappings.push({ name: "docker", providertype: "docker", provisioner: { network: NETWORK }, flavor: FLAVOR.docker, image: { image: IMAGE, sshuser: "root" } });
  }
  if (PROVIDERS.includes("ec2")) {
    emulator = await startEc2Emulator();
    Object.assign(process.env, EC2_TIMING);
    mappings.push({
      name: "ec2",
      providertype: "ec2",
      provisioner: { region: emulator.region, endpoint: emulator.url, ...EC2_CREDENTIALS },
      flavor: "t3.micro",
      image: { image: EMULATOR_AMI },
    });
  }
  if (PROVIDERS.includes("lxd")) {
    try {
      lxd = await ensureLxdForTests();
      lxdHost = await inotifyForLxd();
      log(lxdHost);
      mappings.push({ name: "lxd", providertype: "lxd", provisioner: lxd.providerFields, flavor: FLAVOR.lxd, image: { image: LXD_NODE_IMAGE, sshuser: "root" } });
    } catch (err) {
      skipped.push({ provider: "lxd", reason: `LXD is not available: ${String(err).split("\n")[0]}` });
      log(`skipping lxd: ${skipped.at(-1)!.reason}`);
    }
  }

  sys = await startSystem({ clusters: 1, provisioners: 0, requestTimeoutMs: 30_000 });
  workDir = await mkdtemp(join(tmpdir(), "corral-bench-providers-"));
  const registry = await openBucket(sys.nc, buckets.provisioners);
  provisioner = await startProvisionerProcess({
    natsUrl: sys.nats.url,
    id: PROVISIONER_ID,
    capacity: WORKERS,
    workDir,
    logLevel: "warn",
    ready: async () => (await readValue(registry, kvKey(PROVISIONER_ID))) !== undefined,
    ...(PROFILE_DIR ? { nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] } : {}),
  });
  await must(SUPERADMIN, "POST", "/tenants", { tenant: { name: TENANT, workers: WORKERS } });
  const admin: Caller = { user: "admin", tenant: TENANT };
  await must(admin, "POST", "/import", benchCatalog(mappings));
  await waitForWorkers();
  const tracker = await trackClusters(sys.nc);

  const runs: Run[] = [];
  const warmUps: Array<{ provider: ProviderName; secondsToActive: number }> = [];
  let n = 0;
  const failures: Array<{ provider: ProviderName; nodes: number; error: string }> = [];
  /** A floor and its cluster; a failure of either is recorded, the provider's leftovers removed, and the run goes on. */
  const attempt = async (provider: ProviderName, nodes: number): Promise<Run | undefined> => {
    try {
      const floor = await floorOf(provider, nodes);
      return await measure(tracker, admin, provider, nodes, n++, floor);
    } catch (err) {
      const error = String(err).split("\n")[0]!;
      log(`${provider} ${nodes} nodes failed: ${error}`);
      failures.push({ provider, nodes, error });
      await removeLeftovers(admin, provider);
      return undefined;
    }
  };
  for (const provider of PROVIDERS) {
    if (!mappings.some((m) => m.name === provider)) continue;
    // A provider's first cluster pays for one-time work (the AWS SDK's loading, the network's creation, ...).
    const warmUp = await attempt(provider, 1);
    if (warmUp) warmUps.push({ provider, secondsToActive: warmUp.secondsToActive });
    for (const nodes of SIZES) {
      const run = await attempt(provider, nodes);
      if (run) runs.push(run);
    }
  }
  const targetRuns: Run[] = [];
  for (let r = 0; r < (TARGET_NODES > 0 ? TARGET_ROUNDS : 0); r++) {
    const run = await attempt("docker", TARGET_NODES);
    if (run) targetRuns.push(run);
  }
  tracker.stop();

  const bySize = runs.map((r) => ({
    provider: r.provider,
    nodes: r.nodes,
    secondsToActive: r.secondsToActive,
    floorSeconds: r.floorSeconds,
    ratioToFloor: r.ratioToFloor,
    ...r.split,
    secondsToTerminated: r.secondsToTerminated,
  }));
  const target =
    targetRuns.length === 0
      ? undefined
      : (() => {
          const toActive = median(targetRuns.map((r) => r.secondsToActive));
          const floor = median(targetRuns.map((r) => r.floorSeconds));
          const ratio = round(median(targetRuns.map((r) => r.ratioToFloor)), 2);
          return {
            goal: `a ${TARGET_NODES}-node docker cluster of the one-service template active within ${TARGET_RATIO}x its floor`,
            nodes: TARGET_NODES,
            rounds: targetRuns.map((r) => ({ secondsToActive: r.secondsToActive, floorSeconds: r.floorSeconds, ratioToFloor: r.ratioToFloor, ...r.split })),
            medianSecondsToActive: toActive,
            medianFloorSeconds: floor,
            medianRatioToFloor: ratio,
            met: ratio <= TARGET_RATIO,
          };
        })();
  writeResult(OUT, {
    date: new Date().toISOString(),
    commit,
    machine: `${machine()}; ${totalMemoryGiB()} GiB; the machines (containers, LXD instances) run on the same cores`,
    loadBefore: load0,
    loadAfter: await loadSnapshot(),
    configuration: {
      template: "one service on every node (shell actions: install writes a file, configure writes a file, start starts setsid sleep infinity)",
      provisioner: `one child process, bundled plugins, capacity ${WORKERS}; the tenant has ${WORKERS} workers`,
      inThisProcess: "nats-server (own process), tenancy, plugins, gateway, one clusters service, the REST client, the KV watch, the EC2 emulator",
      docker: `flavor ${FLAVOR.docker}, image ${IMAGE}, one user-defined bridge network`,
      ec2: `the EC2 emulator (instances are containers of ${IMAGE}, host keys read with docker exec for the console); ${Object.entries(EC2_TIMING).map(([k, v]) => `${k}=${v}`).join(", ")}; the floor is Docker's`,
      lxd: lxd ? `flavor ${FLAVOR.lxd}, image ${lxd.image}, network ${lxd.network}, dir pool ${lxd.storagePool}, key by cloud-init; ${lxdHost}` : "not measured",
      floors: `N machines started ${FLOOR_CONCURRENCY} at a time as the provider makes them, until each sshd greets (polled every 25 ms); measured just before the cluster it is compared with`,
      settling: `before each floor and each cluster the run waits (at most ${SETTLE_MAX_MS / 1000} s, settledMs) until the machine is 90% idle for half a second`,
      split: "providerCriticalPath: CREATE and CONFIRM stages; automatorCriticalPath: BOOTSTRAP and the service actions; dispatchWait: between a stage's end and the next one's first start; beforeFirstTask: create request to the first CREATE's start; afterLastTask: last task's end to active",
    },
    skipped,
    failures,
    warmUps,
    bySize,
    ...(target ? { target } : {}),
    runs: [...runs, ...targetRuns],
  });
} finally {
  clearTimeout(watchdog);
  await cleanUp();
}
process.exit(0);
