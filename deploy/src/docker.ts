import { spawn } from "node:child_process";
import { mkdir, open, readFile } from "node:fs/promises";
import { request } from "node:http";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { ensureInstalled, which } from "./binaries.js";
import { withDirLock } from "./dir-lock.js";
import { defaultStateDir } from "./paths.js";

/** Options for {@link ensureDocker}. */
export interface DockerOptions {
  /** Receives progress lines ("starting dockerd ..."). @default no output */
  log?: (line: string) => void;
  /** Where `dockerd.log` and the locks live. @default `<repo>/.corral` or `CORRAL_DATA_DIR` */
  stateDir?: string;
  /** Give up when a started dockerd does not answer `/_ping` after this long. @default 60_000 ms */
  startTimeoutMs?: number;
}

/** Where the Docker Engine API listens. */
export type DockerEndpoint = { socketPath: string } | { host: string; port: number };

/** A finished Engine API call. */
export interface DockerResponse {
  status: number;
  body: string;
}

/** Options for {@link dockerRequest}. */
export interface DockerRequestOptions {
  /** Request body: a string (sent as JSON) or a stream (sent as a tar archive). */
  body?: string | Readable;
  /** Abort when the connection is idle this long. @default 30_000 ms */
  timeoutMs?: number;
}

const DEFAULT_SOCKET = "/var/run/docker.sock";
const PING_TIMEOUT_MS = 3_000;

/**
 * The Engine API endpoint: `DOCKER_HOST` when it is `unix://...` or `tcp://...`, else
 * `/var/run/docker.sock`.
 */
export function dockerEndpoint(env: NodeJS.ProcessEnv = process.env): DockerEndpoint {
  const configured = env["DOCKER_HOST"];
  if (!configured) {
    return { socketPath: DEFAULT_SOCKET };
  }
  if (configured.startsWith("unix://")) {
    return { socketPath: configured.slice("unix://".length) };
  }
  if (configured.startsWith("tcp://")) {
    const url = new URL(configured.replace(/^tcp:/, "http:"));
    return { host: url.hostname, port: Number(url.port || 2375) };
  }
  throw new Error(`DOCKER_HOST=${configured} is not supported; use unix:///path/to/docker.sock or tcp://host:port`);
}

/**
 * Calls the Docker Engine API (unversioned paths, for example `/images/json`) and collects the
 * answer. Rejects only when the daemon cannot be reached or the call times out.
 */
export function dockerRequest(method: string, path: string, opts: DockerRequestOptions = {}): Promise<DockerResponse> {
  const endpoint = dockerEndpoint();
  const body = opts.body;
  const headers: Record<string, string> = {};
  if (typeof body === "string") {
    headers["Content-Type"] = "application/json";
    headers["Content-Length"] = String(Buffer.byteLength(body));
  } else if (body) {
    headers["Content-Type"] = "application/x-tar";
  }
  return new Promise((resolvePromise, reject) => {
    const req = request({ ...endpoint, method, path, headers, timeout: opts.timeoutMs ?? 30_000 }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolvePromise({ status: res.statusCode ?? 0, body: text }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`docker ${method} ${path} timed out`)));
    req.on("error", reject);
    if (typeof body === "string") {
      req.end(body);
    } else if (body) {
      body.on("error", (err) => req.destroy(err));
      body.pipe(req);
    } else {
      req.end();
    }
  });
}

/**
 * The error in an Engine API answer that streams JSON progress messages (image import, build): 200 even when it
 * fails, with a message that has `error`; undefined when none has.
 */
export function streamError(body: string): string | undefined {
  for (const line of body.split("\n")) {
    try {
      const message = JSON.parse(line) as { error?: string };
      if (message.error) {
        return message.error;
      }
    } catch {
      // not a JSON line
    }
  }
  return undefined;
}

/** Whether a Docker daemon answers `GET /_ping` on {@link dockerEndpoint}. Installs and starts nothing. */
export async function isDockerAvailable(): Promise<boolean> {
  try {
    const res = await dockerRequest("GET", "/_ping", { timeoutMs: PING_TIMEOUT_MS });
    return res.status === 200;
  } catch {
    return false;
  }
}

/**
 * Makes sure a Docker daemon answers: returns at once when one does; otherwise installs
 * `docker.io` with apt-get when `dockerd` is missing, starts `dockerd` detached (own session,
 * output to `<stateDir>/dockerd.log`) so it outlives this process and serves later runs too, and
 * waits until it answers `/_ping`. Concurrent callers start one daemon (a lock under `stateDir`).
 */
export async function ensureDocker(opts: DockerOptions = {}): Promise<void> {
  if (await isDockerAvailable()) {
    return;
  }
  const endpoint = dockerEndpoint();
  if (!("socketPath" in endpoint)) {
    throw new Error(`no Docker daemon answers at DOCKER_HOST=${process.env["DOCKER_HOST"]}; start it there`);
  }
  const log = opts.log ?? (() => {});
  const stateDir = opts.stateDir ?? defaultStateDir();
  const dockerd = await ensureDockerd(stateDir, log);
  await withDirLock(join(stateDir, "locks", "dockerd.lock"), async () => {
    if (await isDockerAvailable()) {
      return; // another process started it while we waited
    }
    await startDockerd(dockerd, endpoint.socketPath, stateDir, opts.startTimeoutMs ?? 60_000, log);
  });
}

function ensureDockerd(stateDir: string, log: (line: string) => void): Promise<string> {
  return ensureInstalled(stateDir, ["docker.io"], () => which("dockerd"), log);
}

async function startDockerd(
  dockerd: string,
  socketPath: string,
  stateDir: string,
  timeoutMs: number,
  log: (line: string) => void,
): Promise<void> {
  const logPath = await dockerdLogPath(stateDir);
  const args = socketPath === DEFAULT_SOCKET ? [] : ["-H", `unix://${socketPath}`];
  log(`starting ${[dockerd, ...args].join(" ")} (log: ${logPath})`);
  const logFile = await open(logPath, "a");
  let exitedWith: string | undefined;
  try {
    await logFile.write(`--- ${new Date().toISOString()} started by pid ${process.pid}: ${[dockerd, ...args].join(" ")}\n`);
    // Detached with file descriptors instead of pipes: the daemon keeps running after we exit.
    const child = spawn(dockerd, args, { cwd: "/", detached: true, stdio: ["ignore", logFile.fd, logFile.fd] });
    child.once("error", (err) => (exitedWith = err.message));
    child.once("exit", (code, signal) => (exitedWith = signal ? `signal ${signal}` : `exit code ${code}`));
    child.unref();
  } finally {
    await logFile.close();
  }
  const deadline = Date.now() + timeoutMs;
  while (!(await isDockerAvailable())) {
    if (exitedWith !== undefined || Date.now() > deadline) {
      const why = exitedWith !== undefined ? `exited (${exitedWith})` : `did not answer /_ping within ${timeoutMs} ms`;
      throw new Error(`dockerd ${why}; last lines of ${logPath}:\n${await tail(logPath, 15)}`);
    }
    await sleep(250);
  }
  log("dockerd answers /_ping");
}

/** `<stateDir>/dockerd.log`, or `/tmp/dockerd.log` when the state dir cannot be created. */
async function dockerdLogPath(stateDir: string): Promise<string> {
  try {
    await mkdir(stateDir, { recursive: true });
    return join(stateDir, "dockerd.log");
  } catch {
    return join("/tmp", "dockerd.log");
  }
}

async function tail(path: string, lines: number): Promise<string> {
  try {
    return (await readFile(path, "utf8")).trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

