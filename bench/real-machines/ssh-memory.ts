/**
 * Memory of a provisioner holding 200 concurrent SSH sessions: 25 sshd containers of the node image, and a
 * process of its own (bench/real-machines/ssh-memory-provisioner.ts: the `shell` automator and its SshPool, as a
 * provisioner carries them) running `sleep` actions through them. Phases, each sampled after a full GC:
 *
 * 1. before: modules loaded, warmed up on a pool of its own (closed: see ssh-memory-provisioner.ts), the measured
 *    pool and automator made, nothing connected;
 * 2. 25 sessions, one per host: 25 connections with one channel each (then idle: 25 pooled connections);
 * 3. 200 sessions, 8 per host (SshPool's maxChannelsPerConnection): still 25 connections, 8 channels each;
 * 4. the same 200 again, to see whether anything stays behind.
 *
 * Reports RSS and heap before and while, the cost per connection, per extra channel and per session, and the
 * memory the sessions take on the nodes (sshd and the shells, from the containers' cgroups). Writes
 * bench/results/ssh-session-memory.json.
 *
 * Run: node --import=tsx bench/real-machines/ssh-memory.ts
 * Env: BENCH_HOSTS (25), BENCH_SESSIONS (200), BENCH_SLEEP_S (10)
 */
import { fork } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { containerRssBytes, cpuWindow, loadSnapshot, log, machine, round, startSshFleet, totalMemoryGiB, writeResult } from "./lib.js";
import type { MemorySample, PhaseReport, PhaseRequest } from "./ssh-memory-provisioner.js";
import { envNumber as env } from "../env.js";
import { median } from "../stats.js";

const HOSTS = env("BENCH_HOSTS", 25);
const SESSIONS = env("BENCH_SESSIONS", 200);
const SLEEP_S = env("BENCH_SLEEP_S", 10);

const MiB = 1024 * 1024;
const mib = (bytes: number) => round(bytes / MiB, 1);
const kib = (bytes: number) => round(bytes / 1024, 1);

/** A sample in MiB, for the results file. */
const view = (s: MemorySample) => ({
  rssMiB: mib(s.rss),
  heapUsedMiB: mib(s.heapUsed),
  heapTotalMiB: mib(s.heapTotal),
  externalMiB: mib(s.external),
  arrayBuffersMiB: mib(s.arrayBuffers),
  connections: s.connections,
  sessions: s.leases,
});

/** Medians of the samples taken while the sessions were all open. */
function steady(samples: MemorySample[], sessions: number): MemorySample {
  const open = samples.filter((s) => s.leases === sessions);
  if (open.length === 0) throw new Error(`no sample saw all ${sessions} sessions open: ${JSON.stringify(samples.map((s) => s.leases))}`);
  const pick = (k: keyof MemorySample) => median(open.map((s) => s[k]));
  return {
    atMs: pick("atMs"),
    rss: pick("rss"),
    heapUsed: pick("heapUsed"),
    heapTotal: pick("heapTotal"),
    external: pick("external"),
    arrayBuffers: pick("arrayBuffers"),
    connections: pick("connections"),
    leases: sessions,
  };
}

/**
 * Growth per session (or connection) from `a` to `b`. Raw RSS also moves with V8's heap sizing (it grows and
 * shrinks new space with the allocation rate, some 15 MiB either way), so beside it: RSS less the heap's free
 * space (rss - heapTotal + heapUsed), which counts live heap and everything native, not the heap's slack.
 */
const slackless = (s: MemorySample) => s.rss - s.heapTotal + s.heapUsed;
const diff = (a: MemorySample, b: MemorySample, per: number) => ({
  rssLessHeapSlackKiB: kib((slackless(b) - slackless(a)) / per),
  rssKiB: kib((b.rss - a.rss) / per),
  heapUsedKiB: kib((b.heapUsed - a.heapUsed) / per),
  externalKiB: kib((b.external - a.external) / per),
});

const load0 = await loadSnapshot();
log(`starting ${HOSTS} sshd containers (load ${load0.loadAverage1m5m15m.join(" ")}, ${load0.runningContainers} containers running)`);
const fleet = await startSshFleet(HOSTS, "corral-bench-ssh-memory");
const ids = fleet.hosts.map((h) => h.id);
const dir = await mkdtemp(join(tmpdir(), "corral-bench-mem-"));
try {
  // Session i goes to host i mod HOSTS: the first HOSTS sessions are one per host, 200 are 8 per host.
  const tasks = Array.from({ length: SESSIONS }, (_, i) => fleet.task(i, `00000001-001-${i}`));
  const inputFile = join(dir, "input.json");
  await writeFile(inputFile, JSON.stringify({ workDir: fleet.workDir, tasks }));
  const child = fork(fileURLToPath(new URL("./ssh-memory-provisioner.ts", import.meta.url)), [inputFile], {
    execArgv: ["--import=tsx", "--expose-gc"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const messages: unknown[] = [];
  let wake: (() => void) | undefined;
  child.on("message", (m) => {
    messages.push(m);
    wake?.();
  });
  const next = async <T>(): Promise<T> => {
    while (messages.length === 0) {
      if (child.exitCode !== null) throw new Error(`the provisioner process exited (${child.exitCode})`);
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 1000);
      });
    }
    return messages.shift() as T;
  };
  const nodeRss0 = containerRssBytes(ids);
  const ready = (await next<{ ready: MemorySample }>()).ready;
  log(`before: ${JSON.stringify(view(ready))}`);
  const sleepMs = SLEEP_S * 1000;
  const sampleTimes = [0.4, 0.5, 0.6, 0.7, 0.8].map((f) => Math.round(sleepMs * f));
  let nodeRssDuring = 0;
  const phase = async (name: string, sessions: number) => {
    const cpu = cpuWindow(ids);
    const req: PhaseRequest = { phase: name, sessions, sleepSeconds: SLEEP_S, sampleAtMs: sampleTimes };
    child.send(req);
    // The nodes' side, sampled mid-way like the provisioner's.
    const nodeSample = new Promise<number>((r) => setTimeout(() => r(containerRssBytes(ids)), sleepMs * 0.6));
    const report = await next<PhaseReport & { error?: string }>();
    if (report.error) throw new Error(`${name}: ${report.error}`);
    if (report.failures.length) throw new Error(`${name}: ${report.failures.length} actions failed, e.g. ${report.failures[0]}`);
    const nodes = await nodeSample;
    if (sessions === SESSIONS) nodeRssDuring = Math.max(nodeRssDuring, nodes);
    log(`${name}: ${report.seconds.toFixed(1)} s, during ${JSON.stringify(view(steady(report.during, sessions)))}, after ${JSON.stringify(view(report.after))}`);
    return { report, nodesRss: nodes, cpu: cpu() };
  };

  const one = await phase("one session per host", HOSTS);
  const many = await phase(`${SESSIONS} sessions`, SESSIONS);
  const again = await phase(`${SESSIONS} sessions again`, SESSIONS);
  child.send({ exit: true });
  await new Promise((r) => child.once("exit", r));

  const oneDuring = steady(one.report.during, HOSTS);
  const pooledIdle = one.report.after;
  const manyDuring = steady(many.report.during, SESSIONS);
  const againDuring = steady(again.report.during, SESSIONS);
  const perSession = diff(ready, manyDuring, SESSIONS);
  writeResult("ssh-session-memory.json", {
    date: new Date().toISOString(),
    machine: `${machine()}; ${totalMemoryGiB()} GiB; the sshd containers run on the same machine`,
    loadBefore: load0,
    loadAfter: await loadSnapshot(),
    configuration: {
      hosts: HOSTS,
      sessions: SESSIONS,
      action: `shell automator runAction, script \`sleep ${SLEEP_S}\` (each an exec channel: /bin/sh -s reading the action script, then sh -c sleep)`,
      pool: "one SshPool with its defaults: maxChannelsPerConnection 8, maxConnections 256, idle connections kept 30 s",
      process:
        "a child process holding only the automator and its pool (no NATS, no worker loops), warmed up on a pool of its own first; samples after two full GCs, medians of those taken while every session was open",
      perSessionFigures: "rssLessHeapSlack (rss - heapTotal + heapUsed) is the figure to read; raw rss differences mostly show V8 resizing its heap",
      image: "corral/node:bookworm (sshd MaxSessions 64)",
    },
    summary: {
      provisionerPerSession: perSession,
      before: view(ready),
      [`while${SESSIONS}`]: view(manyDuring),
      connectionsWhile200: manyDuring.connections,
      perConnectionWithOneChannel: diff(ready, oneDuring, HOSTS),
      perExtraChannelOnAnOpenConnection: diff(pooledIdle, manyDuring, SESSIONS - HOSTS),
      perIdlePooledConnection: diff(ready, pooledIdle, HOSTS),
      secondRoundPerSession: diff(ready, againDuring, SESSIONS),
      nodesRssKiBPerSession: kib((nodeRssDuring - nodeRss0) / SESSIONS),
    },
    samples: {
      before: view(ready),
      oneSessionPerHost: { during: view(oneDuring), afterIdlePooled: view(pooledIdle), seconds: round(one.report.seconds, 2), cpu: one.cpu },
      allSessions: {
        during: view(manyDuring),
        peakRssMiBNoGc: mib(many.report.peakRss),
        after: view(many.report.after),
        seconds: round(many.report.seconds, 2),
        cpu: many.cpu,
        each: many.report.during.map(view),
      },
      allSessionsAgain: { during: view(againDuring), peakRssMiBNoGc: mib(again.report.peakRss), after: view(again.report.after), seconds: round(again.report.seconds, 2) },
    },
    nodes: {
      note: "anonymous memory of the sshd containers (sshd session processes, sh, sleep), from their cgroups",
      rssMiBBefore: mib(nodeRss0),
      rssMiBWhileAllSessions: mib(nodeRssDuring),
    },
  });
} finally {
  await rm(dir, { recursive: true, force: true });
  await fleet.stop();
}
process.exit(0);
