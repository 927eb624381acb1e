import { spawn } from "node:child_process";
import { access, constants } from "node:fs/promises";
import { join } from "node:path";

/** How one command ran. */
export interface ProcessOutcome {
  /** Exit code, or `undefined` when the process was killed by a signal. */
  exitCode: number | undefined;
  signal: NodeJS.Signals | undefined;
  stdout: string;
  stderr: string;
  isTimedOut: boolean;
  isAborted: boolean;
}

export interface RunShellOptions {
  /** Passed to `/bin/sh -c`. */
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The process group is killed past this. */
  timeoutMs: number;
  /** Kills the process group when aborted. */
  signal: AbortSignal;
  /** Between SIGTERM and SIGKILL of the group. @default 2000 */
  killGraceMs?: number;
  /** Argv run before `/bin/sh -c command` that ends by exec'ing it, in the same process group (a sandbox). */
  launcher?: readonly string[];
  /** User and group to spawn as (a sandbox without a launcher). */
  uid?: number;
  gid?: number;
}

/** Output kept in memory per stream; results keep far less (`MAX_LOG_CHARS`). */
const KEEP_CHARS = 64 * 1024;
/** How long the pipes may stay open after the shell exited (a background child holding them). */
const CLOSE_GRACE_MS = 1000;

/**
 * Runs `/bin/sh -c command` (through `launcher`, when given) in its own process group, collecting the tail of
 * stdout and stderr. A timeout or an abort sends SIGTERM to the whole group, then SIGKILL after a grace period.
 * Never rejects for the command's own failures (only for a failure to spawn).
 */
export function runShell(options: RunShellOptions): Promise<ProcessOutcome> {
  return new Promise((resolve, reject) => {
    const [file = "/bin/sh", ...args] = [...(options.launcher ?? []), "/bin/sh", "-c", options.command];
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      ...(options.uid !== undefined ? { uid: options.uid } : {}),
      ...(options.gid !== undefined ? { gid: options.gid } : {}),
    });
    let stdout = "";
    let stderr = "";
    const keep = (text: string, chunk: Buffer) => {
      const next = text + chunk.toString("utf8");
      return next.length > KEEP_CHARS ? next.slice(next.length - KEEP_CHARS) : next;
    };
    child.stdout.on("data", (c: Buffer) => (stdout = keep(stdout, c)));
    child.stderr.on("data", (c: Buffer) => (stderr = keep(stderr, c)));

    let isTimedOut = false;
    let isAborted = false;
    let killTimer: NodeJS.Timeout | undefined;
    const killGroup = (sig: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, sig);
      } catch {
        // already gone
      }
    };
    const terminate = () => {
      killGroup("SIGTERM");
      killTimer ??= setTimeout(() => killGroup("SIGKILL"), options.killGraceMs ?? 2000);
    };
    const timeout = setTimeout(() => {
      isTimedOut = true;
      terminate();
    }, options.timeoutMs);
    const onAbort = () => {
      isAborted = true;
      terminate();
    };
    options.signal.addEventListener("abort", onAbort, { once: true });
    if (options.signal.aborted) onAbort();

    let settled = false;
    const finish = (exitCode: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      if (killTimer) {
        // The shell is gone; still make sure nothing of a killed group outlives it.
        clearTimeout(killTimer);
        killGroup("SIGKILL");
      }
      options.signal.removeEventListener("abort", onAbort);
      resolve({
        exitCode: exitCode ?? undefined,
        signal: signal ?? undefined,
        stdout,
        stderr,
        isTimedOut,
        isAborted,
      });
    };
    child.once("error", (err) => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      options.signal.removeEventListener("abort", onAbort);
      reject(err);
    });
    child.once("close", (code, signal) => finish(code, signal));
    child.once("exit", (code, signal) => {
      // A background process may keep the pipes open; do not wait for it forever.
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish(code, signal);
      }, CLOSE_GRACE_MS).unref();
    });
  });
}

/**
 * An action's status: 0 when it exited 0 in time; 1 when it timed out, was aborted or killed by a signal (even
 * when a sandbox's first process reports the killed command's 128 + signal as its exit code); else its exit code.
 */
export function exitStatus(outcome: ProcessOutcome): number {
  if (outcome.isTimedOut || outcome.isAborted || outcome.signal) return 1;
  return outcome.exitCode ?? 1;
}

/** True when an executable named `name` is on `pathEnv` (a PATH string). */
export async function isOnPath(name: string, pathEnv: string | undefined): Promise<boolean> {
  for (const dir of (pathEnv ?? "").split(":").filter(Boolean)) {
    try {
      await access(join(dir, name), constants.X_OK);
      return true;
    } catch {
      // next
    }
  }
  return false;
}
