import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/** How a server process ended. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all. */
  error?: Error;
}

/** A server binary running as a child process. */
export interface ServerProcess {
  pid: number;
  /** Settles once the process has exited (never rejects). */
  exited: Promise<ExitInfo>;
  hasExited(): boolean;
  /** The last lines the process printed, for error messages. */
  outputTail(): string;
  /** SIGTERM, wait up to `graceMs`, then SIGKILL; resolves when the process is gone. */
  terminate(graceMs?: number): Promise<ExitInfo>;
}

/** Options for {@link spawnServer}. */
export interface SpawnServerOptions {
  cwd?: string;
  /**
   * Run in its own process group so a terminal's Ctrl-C reaches only our process, which then
   * stops the server in order. @default false
   */
  detached?: boolean;
  /** Receives each line the server prints (stdout and stderr). */
  onLine?: (line: string) => void;
  /** The server's environment. @default this process's */
  env?: NodeJS.ProcessEnv;
}

const TAIL_LINES = 40;
const live = new Set<{ kill(signal: NodeJS.Signals): void }>();
let exitHookInstalled = false;

/**
 * Spawns a server binary with its output drained (a full pipe would block the server), keeping a
 * tail for diagnostics. Servers still alive when this process exits get SIGTERM.
 */
export function spawnServer(command: string, args: readonly string[], opts: SpawnServerOptions = {}): ServerProcess {
  installExitHook();
  const child = spawn(command, args, {
    cwd: opts.cwd,
    detached: opts.detached ?? false,
    env: opts.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const tail: string[] = [];
  const onLine = (line: string): void => {
    tail.push(line);
    if (tail.length > TAIL_LINES) {
      tail.shift();
    }
    opts.onLine?.(line);
  };
  createInterface({ input: child.stdout }).on("line", onLine);
  createInterface({ input: child.stderr }).on("line", onLine);

  let done = false;
  const handle = { kill: (signal: NodeJS.Signals) => child.kill(signal) };
  live.add(handle);
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once("error", (error) => {
      done = true;
      live.delete(handle);
      resolve({ code: null, signal: null, error });
    });
    child.once("exit", (code, signal) => {
      done = true;
      live.delete(handle);
      resolve({ code, signal });
    });
  });

  return {
    pid: child.pid ?? -1,
    exited,
    hasExited: () => done,
    outputTail: () => tail.join("\n"),
    async terminate(graceMs = 10_000): Promise<ExitInfo> {
      if (!done) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
        try {
          await exited;
        } finally {
          clearTimeout(timer);
        }
      }
      return exited;
    },
  };
}

/** Describes an exit for error messages: "exit code 1" or "signal SIGKILL". */
export function describeExit(info: ExitInfo): string {
  if (info.error) {
    return info.error.message;
  }
  return info.signal ? `signal ${info.signal}` : `exit code ${info.code}`;
}

function installExitHook(): void {
  if (exitHookInstalled) {
    return;
  }
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const p of live) {
      p.kill("SIGTERM");
    }
  });
}
