/**
 * Services as real child processes, for crash tests and benchmarks: spawn `node --import=tsx <entry>`, wait until
 * it is ready, kill it (SIGKILL is a crash: no shutdown hook runs), start it again. Every process a test starts
 * through a {@link ProcessSet} is stopped by `stopAll()` (call it in `test.after.always`).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { repoRoot } from "@corral/deploy";

/** How a child process ended. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcessOptions {
  /** Shown in errors ("clusters-1"). */
  name: string;
  /** Entry file, relative to the repository root (`services/clusters/src/index.ts`). */
  entry: string;
  /** Added to the parent's environment. */
  env: Record<string, string>;
  /** Extra node options before the entry (`--cpu-prof`, ...). */
  nodeArgs?: string[];
  /** Ready once a log line's `msg` equals this (the service's JSON-lines logger writes to stderr). */
  readyMsg?: string;
  /** Ready once this resolves true (polled every 50 ms); combined with `readyMsg` when both are given. */
  ready?: () => Promise<boolean>;
  /** @default 30_000 ms */
  startTimeoutMs?: number;
  /** Lines of output kept for error messages. @default 200 */
  keepLines?: number;
  /** Every output line, as it comes. */
  onLine?: (line: string) => void;
  /**
   * Output goes to this file instead of a pipe this process reads (benchmarks: reading every request log line costs
   * the machine CPU the measured system then lacks). `readyMsg` and `onLine` need the pipe; `output()` reads the file.
   */
  logFile?: string;
}

/** A running child process started by {@link startServiceProcess}. */
export interface ServiceProcess {
  readonly name: string;
  readonly pid: number;
  /** Settles when the process has exited, however. */
  readonly exited: Promise<ExitInfo>;
  /** Whether it has exited. */
  isAlive(): boolean;
  /** Sends `signal` (default SIGKILL: a crash) and waits for the exit. No-op once exited. */
  kill(signal?: NodeJS.Signals): Promise<ExitInfo>;
  /** SIGTERM, then SIGKILL after `graceMs` (default 10 s). Idempotent. */
  stop(graceMs?: number): Promise<ExitInfo>;
  /** The last output lines (stdout and stderr interleaved), for diagnostics. */
  output(): string[];
  /** Starts a new process with the same options (after a kill: a restart). */
  respawn(): Promise<ServiceProcess>;
}

/** Starts `node --import=tsx <entry>` from the repository root and waits until it is ready. */
export async function startServiceProcess(options: ServiceProcessOptions): Promise<ServiceProcess> {
  const keep = options.keepLines ?? 200;
  const lines: string[] = [];
  let readySeen = options.readyMsg === undefined;
  if (options.logFile !== undefined && (options.readyMsg !== undefined || options.onLine)) {
    throw new Error(`${options.name}: readyMsg and onLine read the output pipe, which logFile replaces`);
  }
  const logFd = options.logFile === undefined ? undefined : openSync(options.logFile, "a");
  const child: ChildProcess = spawn(process.execPath, [...(options.nodeArgs ?? []), "--import=tsx", options.entry], {
    cwd: repoRoot,
    env: { ...process.env, ...options.env },
    stdio: logFd === undefined ? ["ignore", "pipe", "pipe"] : ["ignore", logFd, logFd],
  });
  if (logFd !== undefined) closeSync(logFd);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${options.name}: spawn failed`);
  let alive = true;
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once("exit", (code, signal) => {
      alive = false;
      resolve({ code, signal });
    });
  });
  // Both pipes are always read to the end: a full pipe would block the child.
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on("line", (line) => {
      lines.push(line);
      if (lines.length > keep) lines.shift();
      options.onLine?.(line);
      if (!readySeen && options.readyMsg !== undefined && messageOf(line) === options.readyMsg) readySeen = true;
    });
  }

  const kill = async (signal: NodeJS.Signals = "SIGKILL") => {
    if (alive) {
      try {
        process.kill(pid, signal);
      } catch {
        // already gone
      }
    }
    return exited;
  };
  let stopping: Promise<ExitInfo> | undefined;
  const handle: ServiceProcess = {
    name: options.name,
    pid,
    exited,
    isAlive: () => alive,
    kill,
    stop(graceMs = 10_000) {
      stopping ??= (async () => {
        if (!alive) return exited;
        void kill("SIGTERM");
        const timer = setTimeout(() => void kill("SIGKILL"), graceMs);
        const info = await exited;
        clearTimeout(timer);
        return info;
      })();
      return stopping;
    },
    output: () => (options.logFile === undefined ? [...lines] : lastLinesOf(options.logFile, keep)),
    respawn: () => startServiceProcess(options),
  };

  const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
  try {
    for (;;) {
      if (!alive) {
        const info = await exited;
        throw new Error(`${options.name} exited before it was ready (${describe(info)}):\n${handle.output().slice(-30).join("\n")}`);
      }
      if (readySeen && (!options.ready || (await options.ready().catch(() => false)))) return handle;
      if (Date.now() > deadline) {
        throw new Error(`${options.name} was not ready after ${options.startTimeoutMs ?? 30_000} ms:\n${handle.output().slice(-30).join("\n")}`);
      }
      await sleep(50);
    }
  } catch (err) {
    await handle.kill();
    throw err;
  }
}

/** The last `count` lines of a file (its last 1 MB at most). */
function lastLinesOf(path: string, count: number): string[] {
  try {
    const text = readFileSync(path, "utf8");
    return text.slice(-1_000_000).split("\n").filter(Boolean).slice(-count);
  } catch {
    return [];
  }
}

function messageOf(line: string): string | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const parsed = JSON.parse(line) as { msg?: unknown };
    return typeof parsed.msg === "string" ? parsed.msg : undefined;
  } catch {
    return undefined;
  }
}

function describe(info: ExitInfo): string {
  return info.signal ? `signal ${info.signal}` : `exit code ${info.code}`;
}

export interface ClustersProcessOptions {
  natsUrl: string;
  /** @default "clusters" */
  name?: string;
  /** `CORRAL_LOG_LEVEL`. @default "info" (the clusters service logs little at info) */
  logLevel?: string;
  /** Extra node options (`--cpu-prof`, ...). */
  nodeArgs?: string[];
  onLine?: (line: string) => void;
}

/** The clusters service (`services/clusters/src/index.ts`) as a child process; ready once it logs that it started. */
export function startClustersProcess(options: ClustersProcessOptions): Promise<ServiceProcess> {
  return startServiceProcess({
    name: options.name ?? "clusters",
    entry: "services/clusters/src/index.ts",
    env: { CORRAL_NATS_URL: options.natsUrl, CORRAL_LOG_LEVEL: options.logLevel ?? "info" },
    readyMsg: "clusters service started",
    ...(options.nodeArgs ? { nodeArgs: options.nodeArgs } : {}),
    ...(options.onLine ? { onLine: options.onLine } : {}),
  });
}

export interface TenancyProcessOptions {
  natsUrl: string;
  /** `CORRAL_TENANCY_TAKEOVERAFTERMS`: when another instance finishes an interrupted import or deletion. */
  takeoverAfterMs?: number;
  onLine?: (line: string) => void;
}

/** The tenancy service (`services/tenancy/src/index.ts`) as a child process; ready once it logs that it started. */
export function startTenancyProcess(options: TenancyProcessOptions): Promise<ServiceProcess> {
  return startServiceProcess({
    name: "tenancy",
    entry: "services/tenancy/src/index.ts",
    env: {
      CORRAL_NATS_URL: options.natsUrl,
      CORRAL_LOG_LEVEL: "info",
      ...(options.takeoverAfterMs !== undefined ? { CORRAL_TENANCY_TAKEOVERAFTERMS: String(options.takeoverAfterMs) } : {}),
    },
    readyMsg: "tenancy service started",
    ...(options.onLine ? { onLine: options.onLine } : {}),
  });
}

export interface ProvisionerProcessOptions {
  natsUrl: string;
  /** `CORRAL_PROVISIONER_ID` */
  id: string;
  /** `CORRAL_PROVISIONER_CAPACITY` */
  capacity: number;
  /** `CORRAL_PROVISIONER_WORKDIR` */
  workDir: string;
  /**
   * `CORRAL_LOG_LEVEL`. @default "info". Readiness does not depend on it: at "warn" (benchmarks: "info" logs a line
   * per task) the process is ready once its registry record exists.
   */
  logLevel?: string;
  /** Also wait until this holds (for example: the balancer gave it workers). */
  ready?: () => Promise<boolean>;
  /** Extra node options (`--cpu-prof`, ...). */
  nodeArgs?: string[];
  onLine?: (line: string) => void;
}

/** The reference provisioner (`provisioner/src/index.ts`) as a child process. */
export function startProvisionerProcess(options: ProvisionerProcessOptions): Promise<ServiceProcess> {
  const level = options.logLevel ?? "info";
  return startServiceProcess({
    name: `provisioner ${options.id}`,
    entry: "provisioner/src/index.ts",
    env: {
      CORRAL_NATS_URL: options.natsUrl,
      CORRAL_PROVISIONER_ID: options.id,
      CORRAL_PROVISIONER_CAPACITY: String(options.capacity),
      CORRAL_PROVISIONER_WORKDIR: options.workDir,
      CORRAL_LOG_LEVEL: level,
    },
    ...(level === "debug" || level === "info" ? { readyMsg: "provisioner service started" } : {}),
    ...(options.ready ? { ready: options.ready } : {}),
    ...(options.nodeArgs ? { nodeArgs: options.nodeArgs } : {}),
    ...(options.onLine ? { onLine: options.onLine } : {}),
  });
}

/**
 * The tasks a provisioner is running, read from its debug log lines (`running task` ... `task done`), by
 * `<taskId>.<dispatch>` with the task name: pass `onLine` to {@link startProvisionerProcess} at log level debug.
 */
export function runningTasksOf(): { running: Map<string, string>; onLine: (line: string) => void } {
  const running = new Map<string, string>();
  const onLine = (line: string): void => {
    if (!line.startsWith("{")) return;
    let parsed: { msg?: string; taskId?: string; dispatch?: number; taskName?: string };
    try {
      parsed = JSON.parse(line) as typeof parsed;
    } catch {
      return; // not a log line
    }
    const key = `${parsed.taskId}.${parsed.dispatch}`;
    if (parsed.msg === "running task" && parsed.taskName) running.set(key, parsed.taskName);
    else if (parsed.msg === "task done") running.delete(key);
  };
  return { running, onLine };
}

/** Keeps every process a test starts, so one call stops them all. */
export interface ProcessSet {
  /** Adds a started process (returns it). */
  add(p: ServiceProcess): ServiceProcess;
  /** Starts through `start` and keeps the result. */
  start(start: () => Promise<ServiceProcess>): Promise<ServiceProcess>;
  /** Every process kept, live or not. */
  all(): readonly ServiceProcess[];
  /** Stops every live process (SIGTERM, then SIGKILL after `graceMs`, default 5 s). */
  stopAll(graceMs?: number): Promise<void>;
  /** The output of every process, labelled, for a failure message. */
  dump(): string;
}

export function createProcessSet(): ProcessSet {
  const kept: ServiceProcess[] = [];
  const set: ProcessSet = {
    add(p) {
      kept.push(p);
      return p;
    },
    async start(start) {
      return set.add(await start());
    },
    all: () => kept,
    async stopAll(graceMs = 5_000) {
      await Promise.all(kept.map((p) => p.stop(graceMs)));
    },
    dump: () => kept.map((p) => `--- ${p.name} (pid ${p.pid}) ---\n${p.output().slice(-40).join("\n")}`).join("\n"),
  };
  return set;
}
