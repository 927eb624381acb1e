import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, open, readFile } from "node:fs/promises";
import { request } from "node:http";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { ensureInstalled, which } from "./binaries.js";
import { withDirLock } from "./dir-lock.js";
import { run } from "./exec.js";
import { defaultStateDir } from "./paths.js";

/**
 * The local LXD daemon for `npm run lxd-image` and the test helpers: its socket, a minimal client of its REST API
 * (calls and operation waits), and starting it (installing Debian's `lxd` and `dnsmasq-base` when missing).
 */

/** Options for {@link ensureLxd}. */
export interface LxdDaemonOptions {
  /** Receives progress lines. @default no output */
  log?: (line: string) => void;
  /** Where `lxd.log` and the locks live. @default `<repo>/.corral` or `CORRAL_DATA_DIR` */
  stateDir?: string;
  /** Give up when a started daemon is not ready after this long. @default 120_000 ms */
  startTimeoutMs?: number;
}

/** A finished API call: the HTTP status and the parsed JSON answer (undefined when it was not JSON). */
export interface LxdResponse {
  status: number;
  /** `{type, status_code, error, metadata, operation}` */
  json: { type?: string; error?: string; error_code?: number; metadata?: any; operation?: string } | undefined;
  text: string;
}

export interface LxdRequestOptions {
  /** An object (sent as JSON) or a stream (sent as bytes). */
  body?: unknown;
  headers?: Record<string, string>;
  /** Abort when idle this long. @default 60_000 ms */
  timeoutMs?: number;
}

const SOCKET_CANDIDATES = ["/var/snap/lxd/common/lxd/unix.socket", "/var/lib/lxd/unix.socket"];

/** `LXD_SOCKET`, else `$LXD_DIR/unix.socket`, else the snap's or Debian's socket, whichever exists (Debian's by default). */
export function lxdSocketPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env["LXD_SOCKET"]) return env["LXD_SOCKET"];
  if (env["LXD_DIR"]) return join(env["LXD_DIR"], "unix.socket");
  return SOCKET_CANDIDATES.find((p) => existsSync(p)) ?? SOCKET_CANDIDATES[1]!;
}

/** Calls LXD's API on the local socket. Rejects only when the daemon cannot be reached or the call times out. */
export function lxdRequest(method: string, path: string, opts: LxdRequestOptions = {}): Promise<LxdResponse> {
  const socketPath = lxdSocketPath();
  const headers: Record<string, string> = { ...opts.headers };
  const body = opts.body;
  const isStream = typeof (body as Readable | undefined)?.pipe === "function";
  let payload: string | undefined;
  if (body !== undefined && !isStream) {
    payload = JSON.stringify(body);
    headers["Content-Type"] = "application/json";
    headers["Content-Length"] = String(Buffer.byteLength(payload));
  } else if (isStream) {
    headers["Content-Type"] ??= "application/octet-stream";
  }
  return new Promise((resolvePromise, reject) => {
    const req = request({ socketPath, method, path, headers, host: "lxd", timeout: opts.timeoutMs ?? 60_000 }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => {
        let json: LxdResponse["json"];
        try {
          json = JSON.parse(text) as LxdResponse["json"];
        } catch {
          json = undefined;
        }
        resolvePromise({ status: res.statusCode ?? 0, json, text });
      });
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`lxd ${method} ${path} timed out`)));
    req.on("error", reject);
    if (isStream) {
      const stream = body as Readable;
      stream.on("error", (err) => req.destroy(err));
      stream.pipe(req);
    } else {
      req.end(payload);
    }
  });
}

/** The metadata of a successful call; throws with LXD's message otherwise. */
export async function lxdCall(method: string, path: string, opts: LxdRequestOptions = {}): Promise<any> {
  const res = await lxdRequest(method, path, opts);
  if (res.status >= 400 || res.json?.type === "error") {
    throw new Error(`lxd ${method} ${path} failed (${res.status}): ${res.json?.error ?? res.text.trim().slice(0, 500)}`);
  }
  if (res.json?.type === "async") return lxdWait(res.json.metadata as { id: string; description?: string });
  return res.json?.metadata;
}

/** Waits for a background operation; its final metadata, or throws with its error. */
export async function lxdWait(op: { id: string; description?: string }): Promise<any> {
  for (;;) {
    const res = await lxdRequest("GET", `/1.0/operations/${op.id}/wait?timeout=30`, { timeoutMs: 60_000 });
    if (res.status >= 400) throw new Error(`lxd: waiting for ${op.description ?? op.id} failed (${res.status}): ${res.json?.error ?? res.text}`);
    const current = res.json?.metadata as { status_code: number; err?: string; status: string; metadata?: unknown };
    if (current.status_code === 200) return current.metadata;
    if (current.status_code === 400 || current.status_code === 401) {
      throw new Error(`lxd: ${op.description ?? op.id} failed: ${current.err || current.status}`);
    }
  }
}

/** Whether LXD answers `GET /1.0` on {@link lxdSocketPath}. Installs and starts nothing. */
export async function isLxdAvailable(): Promise<boolean> {
  try {
    return (await lxdRequest("GET", "/1.0", { timeoutMs: 5_000 })).status === 200;
  } catch {
    return false;
  }
}

/**
 * Makes sure LXD answers on its socket: returns at once when it does; otherwise installs `lxd` and `dnsmasq-base`
 * with apt-get when missing, starts the daemon (its systemd unit when systemd runs, else `lxd --group lxd` detached,
 * output to `<stateDir>/lxd.log`, so it outlives this process) and waits until it is ready. Concurrent callers start
 * one daemon (a lock under `stateDir`). Initialising it (storage pools, networks) is left to the caller.
 */
export async function ensureLxd(opts: LxdDaemonOptions = {}): Promise<void> {
  const log = opts.log ?? (() => {});
  const stateDir = opts.stateDir ?? defaultStateDir();
  const lxd = await ensureInstalled(
    stateDir,
    ["lxd", "dnsmasq-base"],
    async () => {
      const [daemon, dnsmasq] = await Promise.all([which("lxd"), which("dnsmasq")]);
      return daemon && dnsmasq ? daemon : undefined;
    },
    log,
  );
  if (await isLxdAvailable()) return;
  await withDirLock(join(stateDir, "locks", "lxd.lock"), async () => {
    if (await isLxdAvailable()) return;
    await startLxd(lxd, stateDir, opts.startTimeoutMs ?? 120_000, log);
  });
}

async function startLxd(lxd: string, stateDir: string, timeoutMs: number, log: (line: string) => void): Promise<void> {
  if (await systemdRuns()) {
    log("starting lxd with systemctl start lxd");
    const started = await run("systemctl", ["start", "lxd.socket", "lxd.service"]);
    if (started.code === 0) return waitReady(lxd, timeoutMs, undefined, log);
    log(`systemctl start lxd failed (${started.stderr.trim()}); starting the daemon directly`);
  }
  await mkdir(stateDir, { recursive: true });
  const logPath = join(stateDir, "lxd.log");
  const args = (await run("getent", ["group", "lxd"]).catch(() => undefined))?.code === 0 ? ["--group", "lxd"] : [];
  log(`starting ${[lxd, ...args].join(" ")} (log: ${logPath})`);
  const logFile = await open(logPath, "a");
  let exitedWith: string | undefined;
  try {
    await logFile.write(`--- ${new Date().toISOString()} started by pid ${process.pid}: ${[lxd, ...args].join(" ")}\n`);
    // Detached with file descriptors instead of pipes: the daemon keeps running after we exit.
    const child = spawn(lxd, args, { cwd: "/", env: daemonEnv(), detached: true, stdio: ["ignore", logFile.fd, logFile.fd] });
    child.once("error", (err) => (exitedWith = err.message));
    child.once("exit", (code, signal) => (exitedWith = signal ? `signal ${signal}` : `exit code ${code}`));
    child.unref();
  } finally {
    await logFile.close();
  }
  await waitReady(lxd, timeoutMs, { logPath, exited: () => exitedWith }, log);
}

/** Waits until the daemon answers and says it is ready (`lxd waitready`). */
async function waitReady(
  lxd: string,
  timeoutMs: number,
  child: { logPath: string; exited: () => string | undefined } | undefined,
  log: (line: string) => void,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await isLxdAvailable())) {
    const exited = child?.exited();
    if (exited !== undefined || Date.now() > deadline) {
      const why = exited !== undefined ? `exited (${exited})` : `did not answer on ${lxdSocketPath()} within ${timeoutMs} ms`;
      throw new Error(`lxd ${why}${child ? `; last lines of ${child.logPath}:\n${await tail(child.logPath, 15)}` : ""}`);
    }
    await sleep(250);
  }
  const seconds = Math.max(1, Math.ceil((deadline - Date.now()) / 1000));
  const ready = await run(lxd, ["waitready", `--timeout=${seconds}`]);
  if (ready.code !== 0) throw new Error(`lxd waitready failed: ${ready.stderr.trim() || ready.stdout.trim()}`);
  log("lxd is ready");
}

/**
 * The daemon's environment: this one with the system's PATH only. Under npm the PATH starts with node_modules/.bin,
 * whose `nft` (a Node file tracer) LXD would take for nftables' command and crash on.
 */
function daemonEnv(): NodeJS.ProcessEnv {
  return { ...process.env, PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" };
}

async function systemdRuns(): Promise<boolean> {
  return existsSync("/run/systemd/system");
}

async function tail(path: string, lines: number): Promise<string> {
  try {
    return (await readFile(path, "utf8")).trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}
