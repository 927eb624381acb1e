/**
 * The provisioner side of bench/real-machines/ssh-memory.ts, in a process of its own so its memory is only
 * that: the `shell` automator and its SshPool (what a provisioner holds for SSH sessions). Started with
 * `--expose-gc` and an IPC channel. It gets the tasks (one per session, spread over the hosts) as JSON on argv[2],
 * warms up on a pool of its own (closed), then runs the phases the parent asks for and answers memory samples
 * (each taken after a full GC; those before and after the sessions once the heap has settled).
 *
 * Messages in: {phase: string, sessions: number, sleepSeconds: number, sampleAtMs: number[]} | {exit: true}.
 * Messages out: {ready: Sample} then, per phase, {phase, during: Sample[], peakRss, after: Sample, statuses, ...}.
 */
import { readFileSync } from "node:fs";
import type { TaskMessage } from "@corral/contracts";
import { silentLogger } from "@corral/shared";
import { createShellAutomator, type PluginOutcome } from "@corral/provisioner";
import { SshPool } from "@corral/provisioner/testing";

export interface MemorySample {
  atMs: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  connections: number;
  leases: number;
}

export interface PhaseRequest {
  phase: string;
  sessions: number;
  sleepSeconds: number;
  /** When (ms after the sessions were started) to take a GC'd sample. */
  sampleAtMs: number[];
}

export interface PhaseReport {
  phase: string;
  sessions: number;
  during: MemorySample[];
  /** Highest RSS seen by a 50 ms sampler (no GC) while the sessions ran. */
  peakRss: number;
  after: MemorySample;
  failures: string[];
  seconds: number;
}

interface Input {
  workDir: string;
  tasks: TaskMessage[];
}

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc || !process.send) throw new Error("start with --expose-gc and an IPC channel");
const send = (m: unknown) => process.send!(m);
const input = JSON.parse(readFileSync(process.argv[2] ?? "", "utf8")) as Input;
const credentials = { workDir: input.workDir, clusterKeys: undefined };
const t0 = performance.now();

/**
 * Warm-up with a pool of its own, closed afterwards: the first connection loads and initialises what every later
 * one shares (crypto bindings: some 19 MB of `external` memory, compiled code), and rounds of concurrent actions
 * (the last as many sessions as measured, held for 3 s) let V8 and malloc size the heap as they will under this
 * load (V8 shrinks its startup-sized new space only while the process is active), so neither counts as a session's
 * cost.
 */
{
  const warmPool = new SshPool({ log: silentLogger });
  const warm = createShellAutomator({ remote: { pool: warmPool, credentials } });
  const round = async (count: number, script: string, args: string) => {
    const outs = await Promise.all(
      input.tasks.slice(0, count).map((task, i) =>
        warm.runAction(
          { task, tenant: task.tenant, workDir: input.workDir, provisionerId: "bench", workerId: `warm${i}`, signal: new AbortController().signal, log: silentLogger },
          { name: "START", service: "warm", fields: { script, args } },
        ),
      ),
    );
    const failed = outs.find((o) => o.status !== 0);
    if (failed) throw new Error(`warm-up action failed: ${failed.stderr ?? ""}`);
  };
  for (let i = 0; i < 5; i++) await round(50, "true", "");
  await round(input.tasks.length, "sleep", "3");
  await warmPool.close();
  await new Promise((r) => setTimeout(r, 1000));
}

const pool = new SshPool({ log: silentLogger });
const shell = createShellAutomator({ remote: { pool, credentials } });

function sample(): MemorySample {
  gc!();
  gc!();
  const m = process.memoryUsage();
  const s = pool.stats();
  return {
    atMs: Math.round(performance.now() - t0),
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    connections: s.connections,
    leases: s.leases,
  };
}

/**
 * A sample once the heap has settled: V8 shrinks its heap (new space above all) some time after a GC, so RSS is
 * sampled again, a GC and a second apart, until two agree within 0.5 MiB (at most 15 tries).
 */
async function settled(): Promise<MemorySample> {
  let last = sample();
  for (let i = 0; i < 15; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = sample();
    const steady = Math.abs(now.rss - last.rss) < 512 * 1024 && now.heapTotal === last.heapTotal;
    last = now;
    if (steady) break;
  }
  return last;
}

async function runPhase(req: PhaseRequest): Promise<PhaseReport> {
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
  const failures: string[] = [];
  const started = performance.now();
  const runs: Array<Promise<PluginOutcome>> = input.tasks.slice(0, req.sessions).map((task, i) =>
    shell.runAction(
      { task, tenant: task.tenant, workDir: input.workDir, provisionerId: "bench", workerId: `w${i}`, signal: new AbortController().signal, log: silentLogger },
      { name: "START", service: "sleeper", fields: { script: "sleep", args: String(req.sleepSeconds) } },
    ),
  );
  const during: MemorySample[] = [];
  for (const at of req.sampleAtMs) {
    const wait = at - (performance.now() - started);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    during.push(sample());
  }
  for (const out of await Promise.all(runs)) if (out.status !== 0) failures.push(`${out.status}: ${(out.stderr ?? "").trim().slice(0, 200)}`);
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  return { phase: req.phase, sessions: req.sessions, during, peakRss, after: await settled(), failures, seconds };
}

process.on("message", (m: PhaseRequest | { exit: true }) => {
  if ("exit" in m) {
    void pool.close().then(() => process.exit(0));
    return;
  }
  runPhase(m).then(send, (err: unknown) => send({ phase: m.phase, error: String(err) }));
});
send({ ready: await settled() });
