import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";

/** A long-running child process the supervisor keeps alive. */
export interface ChildSpec {
  /** Short name used in notices, for example `gateway`. */
  name: string;
  command: string;
  args: readonly string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** Options for {@link createSupervisor}. */
export interface SupervisorOptions {
  /** Receives the supervisor's own notices (exits, restarts, kills). */
  onNotice: (message: string) => void;
  /** Wait this long after SIGTERM before SIGKILL. @default 10_000 ms */
  stopGraceMs?: number;
  /** First restart delay; doubles on each quick crash. @default 1_000 ms */
  minBackoffMs?: number;
  /** Longest restart delay. @default 30_000 ms */
  maxBackoffMs?: number;
  /** A child that ran this long before dying is restarted after `minBackoffMs` again. @default 30_000 ms */
  stableAfterMs?: number;
}

/** Starts children, restarts them with backoff when they die, stops them all on request. */
export interface Supervisor {
  start(spec: ChildSpec): void;
  /**
   * Resolves once every child started so far has said it is ready (`{ type: "ready" }` over its IPC channel, as
   * `runServiceProcess` sends once it serves) at least once; rejects after `timeoutMs` naming those that did not.
   */
  allReady(timeoutMs: number): Promise<void>;
  /** SIGTERM to every child's process group, SIGKILL after the grace period; no more restarts. Idempotent. */
  stopAll(): Promise<void>;
}

interface Supervised {
  spec: ChildSpec;
  /** Said it was ready at least once. */
  ready: boolean;
  child?: ChildProcess;
  exited?: Promise<void>;
  startedAt: number;
  quickCrashes: number;
  restartTimer?: NodeJS.Timeout;
}

/**
 * Creates a supervisor. Each child runs in its own process group (so a terminal's Ctrl-C reaches
 * only the launcher, which then stops children in order, and a child's own subprocesses are
 * stopped with it). Children still running when this process exits get SIGTERM.
 */
export function createSupervisor(opts: SupervisorOptions): Supervisor {
  const stopGraceMs = opts.stopGraceMs ?? 10_000;
  const minBackoffMs = opts.minBackoffMs ?? 1_000;
  const maxBackoffMs = opts.maxBackoffMs ?? 30_000;
  const stableAfterMs = opts.stableAfterMs ?? 30_000;
  const all: Supervised[] = [];
  let stopping: Promise<void> | undefined;
  const readyWaiters = new Set<() => void>();

  const onProcessExit = (): void => {
    for (const s of all) {
      signalGroup(s.child, "SIGTERM");
    }
  };
  process.once("exit", onProcessExit);

  const launch = (s: Supervised): void => {
    s.restartTimer = undefined;
    s.startedAt = Date.now();
    const child = spawn(s.spec.command, [...s.spec.args], {
      cwd: s.spec.cwd,
      env: s.spec.env,
      detached: true,
      // Children write to the supervisor's own stdout and stderr (as under systemd): relaying a line per request
      // through this process cost more CPU than serving the request. Each JSON line names its service. The IPC
      // channel carries one message, the child's "ready" (like systemd's sd_notify), and is then closed by the child.
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    s.child = child;
    child.on("message", (message: unknown) => {
      if ((message as { type?: unknown } | null)?.type !== "ready") return;
      s.ready = true;
      for (const check of [...readyWaiters]) check();
    });
    s.exited = new Promise((resolve) => {
      let settled = false;
      const settle = (how: string): void => {
        if (settled) {
          return;
        }
        settled = true;
        s.child = undefined;
        resolve();
        if (!stopping) {
          scheduleRestart(s, how);
        }
      };
      child.once("error", (err) => settle(`failed: ${err.message}`));
      child.once("exit", (code, signal) => settle(signal ? `was killed by ${signal}` : `exited with code ${code}`));
    });
  };

  const scheduleRestart = (s: Supervised, how: string): void => {
    const ranMs = Date.now() - s.startedAt;
    s.quickCrashes = ranMs >= stableAfterMs ? 1 : s.quickCrashes + 1;
    const delay = Math.min(maxBackoffMs, minBackoffMs * 2 ** (s.quickCrashes - 1));
    opts.onNotice(`${s.spec.name} ${how} after ${formatMs(ranMs)}; restarting in ${formatMs(delay)}`);
    s.restartTimer = setTimeout(() => {
      launch(s);
      opts.onNotice(`${s.spec.name} restarted (pid ${s.child?.pid ?? "none: it did not start"})`);
    }, delay);
  };

  const stopOne = async (s: Supervised): Promise<void> => {
    clearTimeout(s.restartTimer);
    if (!s.child || !s.exited) {
      return;
    }
    signalGroup(s.child, "SIGTERM");
    const child = s.child;
    const timer = setTimeout(() => {
      opts.onNotice(`${s.spec.name} did not stop within ${formatMs(stopGraceMs)}; sending SIGKILL`);
      signalGroup(child, "SIGKILL");
    }, stopGraceMs);
    await s.exited;
    clearTimeout(timer);
  };

  return {
    start(spec: ChildSpec): void {
      if (stopping) {
        throw new Error(`cannot start ${spec.name}: the supervisor is stopping`);
      }
      const s: Supervised = { spec, ready: false, startedAt: Date.now(), quickCrashes: 0 };
      all.push(s);
      launch(s);
    },
    allReady(timeoutMs: number): Promise<void> {
      const waitingFor = () => all.filter((s) => !s.ready).map((s) => s.spec.name);
      return new Promise((resolve, reject) => {
        const check = () => {
          if (waitingFor().length > 0) return;
          readyWaiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          readyWaiters.delete(check);
          reject(new Error(`not ready after ${formatMs(timeoutMs)}: ${waitingFor().join(", ")}`));
        }, timeoutMs);
        readyWaiters.add(check);
        check();
      });
    },
    stopAll(): Promise<void> {
      stopping ??= Promise.all(all.map(stopOne)).then(() => {
        process.removeListener("exit", onProcessExit);
      });
      return stopping;
    },
  };
}

/** Signals the child's whole process group (it is a group leader), falling back to the child alone. */
function signalGroup(child: ChildProcess | undefined, signal: NodeJS.Signals): void {
  if (!child?.pid) {
    return;
  }
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

function formatMs(ms: number): string {
  return ms < 1_000 ? `${ms} ms` : `${(ms / 1_000).toFixed(1)} s`;
}
