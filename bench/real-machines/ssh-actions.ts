/**
 * SSH actions per second of one provisioner: the `shell` automator's `runAction` (the code a worker runs for a
 * service action of a real node) with a no-op command (`true`) against 20 sshd containers of the node image,
 * through one shared SshPool (connections reused, up to 8 channels each), at several concurrencies, for a
 * bounded count each. Beside it: the same without reuse (a fresh SshPool per action, so every action pays the
 * TCP connect, key exchange and public-key login), and a bare `exec true` on a leased connection (no task file,
 * no environment script) to show what the action script itself costs. Writes
 * bench/results/ssh-actions-per-second.json. Target: at least 200 actions/s with reuse.
 *
 * Run: node --import=tsx bench/real-machines/ssh-actions.ts
 * Env: BENCH_HOSTS (20), BENCH_ACTIONS (5000 per concurrency), BENCH_CONCURRENCY ("10,20,30,40,60"),
 *      BENCH_NO_REUSE_ACTIONS (400), BENCH_NO_REUSE_CONCURRENCY (20), BENCH_SERIAL_ACTIONS (300),
 *      BENCH_BARE_CONCURRENCY (40), BENCH_ROUNDS (2: the concurrency sweep, twice)
 */
import { randomUUID } from "node:crypto";
import { silentLogger } from "@corral/shared";
import {
  createShellAutomator,
  type PluginContext,
  type PluginOutcome,
  type ServiceActionCall,
} from "@corral/provisioner";
import { runRemote, SshPool } from "@corral/provisioner/testing";
import { cpuWindow, latencySummary, loadSnapshot, log, machine, round, startSshFleet, totalMemoryGiB, writeResult, type SshFleet } from "./lib.js";
import { envNumber as env } from "../env.js";

const HOSTS = env("BENCH_HOSTS", 20);
const ACTIONS = env("BENCH_ACTIONS", 5000);
const CONCURRENCY = (process.env["BENCH_CONCURRENCY"] ?? "10,20,30,40,60").split(",").map(Number);
const NO_REUSE_ACTIONS = env("BENCH_NO_REUSE_ACTIONS", 400);
const NO_REUSE_CONCURRENCY = env("BENCH_NO_REUSE_CONCURRENCY", 20);
const SERIAL_ACTIONS = env("BENCH_SERIAL_ACTIONS", 300);
const BARE_CONCURRENCY = env("BENCH_BARE_CONCURRENCY", 40);
/** The sweep over concurrencies is run this many times (the machine is shared: rates move between rounds). */
const ROUNDS = env("BENCH_ROUNDS", 2);

const NOOP: ServiceActionCall = { name: "START", service: "noop", fields: { script: "true" } };

/** One action run by `runOne(i)`; its latency, ms, or a failure. */
type Runner = (i: number) => Promise<PluginOutcome>;

/** `count` calls of `runOne`, `concurrency` at a time: rate, latencies, failures, CPU, pool connections seen. */
async function drive(label: string, count: number, concurrency: number, runOne: Runner, nodes: readonly string[], pool?: SshPool) {
  const latencies: number[] = [];
  const failures: string[] = [];
  let next = 0;
  let maxConnections = 0;
  const sampler = pool ? setInterval(() => (maxConnections = Math.max(maxConnections, pool.stats().connections)), 50) : undefined;
  const cpu = cpuWindow(nodes);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const s = performance.now();
        const out = await runOne(i);
        latencies.push(performance.now() - s);
        if (out.status !== 0) failures.push(`${out.status}: ${(out.stderr ?? "").trim().slice(0, 200)}`);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  if (sampler) clearInterval(sampler);
  const used = cpu();
  const result = {
    actions: count,
    concurrency,
    actionsPerSecond: Math.round(count / seconds),
    seconds: round(seconds, 2),
    latencyMs: latencySummary(latencies),
    slowerThan1s: latencies.filter((ms) => ms > 1000).length,
    failures: failures.length,
    ...(failures.length ? { firstFailures: [...new Set(failures)].slice(0, 3) } : {}),
    ...(pool ? { poolConnectionsMax: maxConnections } : {}),
    cpu: {
      ...used,
      thisProcessCpuMsPerAction: round((used.thisProcessCpuSeconds / count) * 1000, 2),
      nodeContainersCpuMsPerAction: round((used.nodeContainersCpuSeconds / count) * 1000, 2),
    },
  };
  log(`${label}: ${JSON.stringify(result)}`);
  return result;
}

type DriveResult = Awaited<ReturnType<typeof drive>>;

function context(fleet: SshFleet, i: number): PluginContext {
  const task = fleet.task(i, `00000001-001-${i}-${randomUUID().slice(0, 4)}`);
  return { task, tenant: task.tenant, workDir: fleet.workDir, provisionerId: "bench", workerId: `w${i}`, signal: new AbortController().signal, log: silentLogger };
}

const load0 = await loadSnapshot();
log(`starting ${HOSTS} sshd containers (load ${load0.loadAverage1m5m15m.join(" ")}, ${load0.runningContainers} containers running)`);
const fleet = await startSshFleet(HOSTS, "corral-bench-ssh-actions");
const ids = fleet.hosts.map((h) => h.id);
try {
  const pool = new SshPool({ log: silentLogger });
  const access = { pool, credentials: { workDir: fleet.workDir, clusterKeys: undefined } };
  const shell = createShellAutomator({ remote: access });
  const action: Runner = (i) => shell.runAction(context(fleet, i), NOOP);

  // The fleet at rest, after its start: what the machine does without us.
  const idle = cpuWindow(ids);
  await new Promise((r) => setTimeout(r, 3000));
  const atRest = idle();
  log(`at rest: ${JSON.stringify(atRest)}`);

  // Warm-up: one action per host opens the pooled connections (and warms the JIT).
  const warm = await drive("warm-up (opens one connection per host)", HOSTS * 2, HOSTS, action, ids, pool);
  const serial = await drive("reuse, one at a time", SERIAL_ACTIONS, 1, action, ids, pool);
  const reuse: Array<DriveResult & { round: number }> = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const c of CONCURRENCY) reuse.push({ round, ...(await drive(`round ${round}, reuse, concurrency ${c}`, ACTIONS, c, action, ids, pool)) });
  }

  // A bare command on a leased connection: what the SSH round trip costs without the action script.
  const bare: Runner = async (i) => {
    const target = { host: fleet.hosts[i % HOSTS]!.ip, port: 22, username: "root", privateKey: fleet.privateKey, hostKeys: fleet.hosts[i % HOSTS]!.hostKeys };
    const lease = await pool.acquire(target, new AbortController().signal);
    try {
      const out = await runRemote(lease, { command: "true", user: "root", timeoutMs: 30_000, signal: new AbortController().signal });
      return { status: out.exitCode ?? 1 };
    } finally {
      lease.release();
    }
  };
  const bareCommand = await drive("bare `true` on a leased connection", ACTIONS, BARE_CONCURRENCY, bare, ids, pool);
  await shell.close?.();

  // The highest concurrency again with 16 channels per connection (sshd allows 64): no host ever needs a second
  // connection, so a tail made by opening one (its handshake on a saturated machine) goes away.
  const wide = new SshPool({ log: silentLogger, maxChannelsPerConnection: 16 });
  const wideShell = createShellAutomator({ remote: { pool: wide, credentials: access.credentials } });
  const wideAction: Runner = (i) => wideShell.runAction(context(fleet, i), NOOP);
  await drive("16 channels per connection, warm-up", HOSTS * 2, HOSTS, wideAction, ids, wide);
  const maxC = Math.max(...CONCURRENCY);
  const sixteenChannels = await drive(`16 channels per connection, concurrency ${maxC}`, ACTIONS, maxC, wideAction, ids, wide);
  await wide.close();

  // No reuse: every action opens, authenticates and closes its own connection.
  const fresh: Runner = async (i) => {
    const own = new SshPool({ log: silentLogger });
    try {
      return await createShellAutomator({ remote: { pool: own, credentials: access.credentials } }).runAction(context(fleet, i), NOOP);
    } finally {
      await own.close();
    }
  };
  const noReuse = await drive("no reuse (fresh SshPool per action)", NO_REUSE_ACTIONS, NO_REUSE_CONCURRENCY, fresh, ids);
  const freshSerial = await drive("no reuse, one at a time", Math.min(100, NO_REUSE_ACTIONS), 1, fresh, ids);

  const best = reuse.reduce((a, b) => (b.actionsPerSecond > a.actionsPerSecond ? b : a));
  const ratesByConcurrency = Object.fromEntries(CONCURRENCY.map((c) => [c, reuse.filter((r) => r.concurrency === c).map((r) => r.actionsPerSecond)]));
  const cpuMs = reuse.map((r) => r.cpu.thisProcessCpuMsPerAction).sort((a, b) => a - b);
  const nodeMs = reuse.map((r) => r.cpu.nodeContainersCpuMsPerAction).sort((a, b) => a - b);
  const medianOf = (xs: number[]) => xs[Math.floor(xs.length / 2)] ?? 0;
  writeResult("ssh-actions-per-second.json", {
    date: new Date().toISOString(),
    machine: `${machine()}; ${totalMemoryGiB()} GiB; the sshd containers run on the same cores`,
    loadBefore: load0,
    loadAfter: await loadSnapshot(),
    configuration: {
      hosts: HOSTS,
      image: "corral/node:bookworm (sshd MaxSessions 64)",
      action: "shell automator runAction, script `true` (task file written and removed, environment exported, /bin/sh -c true)",
      pool: "one SshPool (maxChannelsPerConnection 8, maxConnections 256); actions spread round-robin over the hosts",
      inThisProcess: "the automator and its pool only (no NATS, no worker loops): the SSH side of a provisioner",
      target: "at least 200 actions/s per provisioner with connection reuse",
    },
    summary: {
      bestActionsPerSecondWithReuse: best.actionsPerSecond,
      atConcurrency: best.concurrency,
      inRound: best.round,
      actionsPerSecondByConcurrencyEachRound: ratesByConcurrency,
      medianProvisionerCpuMsPerAction: medianOf(cpuMs),
      medianNodeSideCpuMsPerAction: medianOf(nodeMs),
      oneProvisionerCoreCouldDriveActionsPerSecond: Math.round(1000 / Math.max(0.01, medianOf(cpuMs))),
      p50MsThere: best.latencyMs.p50,
      p99MsThere: best.latencyMs.p99,
      serialLatencyMsWithReuse: serial.latencyMs.p50,
      actionsPerSecondWithoutReuse: noReuse.actionsPerSecond,
      serialLatencyMsWithoutReuse: freshSerial.latencyMs.p50,
      reuseSpeedup: round(best.actionsPerSecond / Math.max(1, noReuse.actionsPerSecond), 1),
      meetsTarget: best.actionsPerSecond >= 200,
    },
    machineAtRestBeforeRuns: atRest,
    warmUp: warm,
    withReuse: { serial, byConcurrency: reuse },
    bareCommandOnLeasedConnection: bareCommand,
    sixteenChannelsPerConnection: {
      note: "the highest concurrency with SshPool maxChannelsPerConnection 16 instead of 8: compare slowerThan1s and poolConnectionsMax with the rounds above",
      ...sixteenChannels,
    },
    withoutReuse: { concurrent: noReuse, serial: freshSerial },
  });
} finally {
  await fleet.stop();
}
process.exit(0);
