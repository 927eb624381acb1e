/**
 * Docker containers as SSH hosts for tests: each runs the `corral/node` image (sshd with keys and
 * passwords from its environment) on a test network, reachable from this machine at its container
 * IP. Everything made here carries the label `corral.test=1` and the creating process's pid
 * (`corral.test.pid`); call {@link removeTestContainers} in `test.after.always`.
 */
import { execFile } from "node:child_process";
import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { ensureNodeImage, isProcessAlive } from "@corral/deploy";

/** Label on every container and network the helpers create. */
export const TEST_LABEL = "corral.test=1";
const PID_LABEL = "corral.test.pid";

/** What a command run with {@link dockerExec} left behind. */
export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** A network made by {@link createTestNetwork}. */
export interface TestNetwork {
  id: string;
  name: string;
  /** Removes the network (its containers must be gone). Idempotent. */
  remove(): Promise<void>;
}

/** A non-root login made at container start, with passwordless sudo. */
export interface SshUser {
  name: string;
  /** @default none: key login only */
  password?: string;
}

/** Options for {@link startSshHost}. */
export interface SshHostOptions {
  /** Network name, from {@link createTestNetwork}. */
  network: string;
  /** `authorized_keys` lines for root (and for `user`). */
  authorizedKeys?: string;
  rootPassword?: string;
  user?: SshUser;
  /** Container name. @default chosen by Docker */
  name?: string;
  /** Run `sleep infinity` instead of sshd, so port 22 refuses connections. @default false */
  noSshd?: boolean;
  /** Give up when sshd does not greet within this long. @default 30_000 ms */
  readyTimeoutMs?: number;
}

/** A running container started by {@link startSshHost}. */
export interface SshHost {
  id: string;
  name: string;
  /** Its address on the test network, reachable from this machine. */
  ip: string;
  /** Removes the container (SIGKILL). Idempotent. */
  stop(): Promise<void>;
}

let ready: Promise<string> | undefined;

/**
 * Starts Docker when needed (`ensureDocker`) and builds the node image when missing, once per
 * process; returns the image.
 */
export function ensureDockerForTests(): Promise<string> {
  ready ??= ensureNodeImage({ log: (line) => process.stderr.write(`[node-image] ${line}\n`) }).catch((err: unknown) => {
      ready = undefined;
      throw err;
    });
  return ready;
}

/** Creates a bridge network named `name` (which must be unused). */
export async function createTestNetwork(name: string): Promise<TestNetwork> {
  const id = (await docker(["network", "create", ...labelArgs(), name])).trim();
  let removing: Promise<void> | undefined;
  const remove = (): Promise<void> => {
    removing ??= dockerExit(["network", "rm", id]).then(() => undefined);
    return removing;
  };
  return { id, name, remove };
}

/**
 * Starts a container of the node image on `network` and, unless `noSshd`, waits until sshd
 * greets on port 22 of its IP.
 */
export async function startSshHost(opts: SshHostOptions): Promise<SshHost> {
  const image = await ensureDockerForTests();
  const env: Record<string, string | undefined> = {
    CORRAL_AUTHORIZED_KEYS: opts.authorizedKeys,
    CORRAL_ROOT_PASSWORD: opts.rootPassword,
    CORRAL_SSH_USER: opts.user?.name,
    CORRAL_SSH_USER_PASSWORD: opts.user?.password,
  };
  const args = ["run", "-d", ...labelArgs(), "--network", opts.network];
  if (opts.name) {
    args.push("--name", opts.name);
  }
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined) {
      args.push("-e", `${key}=${value}`);
    }
  }
  args.push(image, ...(opts.noSshd ? ["sleep", "infinity"] : []));
  const id = (await docker(args)).trim();
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= dockerExit(["rm", "-f", "-v", id]).then(() => undefined);
    return stopping;
  };
  try {
    const format = `{{.Name}} {{(index .NetworkSettings.Networks ${JSON.stringify(opts.network)}).IPAddress}}`;
    const [name = "", ip = ""] = (await docker(["inspect", "-f", format, id])).trim().split(" ");
    if (!ip) {
      throw new Error(`container ${id} has no address on network ${opts.network}`);
    }
    if (!opts.noSshd) {
      await waitForSshBanner(id, ip, opts.readyTimeoutMs ?? 30_000);
    }
    return { id, name: name.replace(/^\//, ""), ip, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Runs `cmd` in the container (`docker exec`); never rejects because of a non-zero exit. */
export async function dockerExec(id: string, cmd: string[]): Promise<ExecResult> {
  return dockerExit(["exec", id, ...cmd]);
}

/**
 * Removes the test containers and networks of this process, and those left behind by test
 * processes that are gone (a crashed run). With `all`, every one labelled `corral.test=1`, also
 * those of test files still running.
 */
export async function removeTestContainers(opts: { all?: boolean } = {}): Promise<void> {
  const format = `{{.ID}} {{.Label "${PID_LABEL}"}}`;
  const ours = (listing: string): string[] =>
    listing
      .split("\n")
      .map((line) => line.trim().split(" "))
      .filter(([id, pid]) => id && (opts.all || !pid || !isProcessAlive(Number(pid)) || Number(pid) === process.pid))
      .map(([id]) => id as string);
  const containers = ours(await docker(["ps", "-a", "--filter", `label=${TEST_LABEL}`, "--format", format]));
  if (containers.length > 0) {
    await removeTolerant(["rm", "-f", "-v", ...containers]);
  }
  // A leftover of a dead process may still have containers of someone else's attached: its removal is tried,
  // but only this process's own networks may fail the clean-up.
  const listing = await docker(["network", "ls", "--filter", `label=${TEST_LABEL}`, "--format", format]);
  const own = ours(listing).filter((id) => opts.all || ownedBy(listing, id, process.pid));
  const leftovers = ours(listing).filter((id) => !own.includes(id));
  if (own.length > 0) await removeTolerant(["network", "rm", ...own]);
  if (leftovers.length > 0) await dockerExit(["network", "rm", ...leftovers]);
}

/** Whether the listing's line of `id` carries this pid label. */
function ownedBy(listing: string, id: string, pid: number): boolean {
  return listing.split("\n").some((line) => {
    const [lineId, linePid] = line.trim().split(" ");
    return lineId === id && Number(linePid) === pid;
  });
}

/** Another process may have removed some meanwhile; only other failures count. */
async function removeTolerant(args: string[]): Promise<void> {
  let result = await dockerExit(args);
  // dockerd detaches a removed container's endpoint asynchronously: right after `rm -f` of many containers a
  // network can still report active endpoints for a few seconds.
  for (let retry = 0; retry < 20 && result.exitCode !== 0 && /has active endpoints/.test(result.stderr); retry++) {
    await sleep(500);
    result = await dockerExit(args);
  }
  const errors = result.stderr.split("\n").filter((line) => line.trim() && !/no such (container|network)|not found/i.test(line));
  if (result.exitCode !== 0 && errors.length > 0) {
    throw new Error(`docker ${args.slice(0, 2).join(" ")} failed (exit ${result.exitCode}): ${errors.join("\n")}`);
  }
}

/** Polls until a TCP connection to `ip:22` reads an `SSH-` greeting, racing the container's exit. */
async function waitForSshBanner(id: string, ip: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await readBanner(ip, 22, 2_000).catch(() => "")).startsWith("SSH-")) {
      return;
    }
    const state = await dockerExit(["inspect", "-f", "{{.State.Running}}", id]);
    if (state.stdout.trim() !== "true" || Date.now() > deadline) {
      const logs = await dockerExit(["logs", "--tail", "20", id]);
      const why = state.stdout.trim() === "true" ? `no SSH greeting within ${timeoutMs} ms` : "the container exited";
      throw new Error(`ssh host ${id.slice(0, 12)} at ${ip}: ${why}; its output:\n${logs.stdout}${logs.stderr}`);
    }
    await sleep(100);
  }
}

/** Connects and returns the first line the server sends; rejects on a refused or silent port. */
export function readBanner(host: string, port: number, timeoutMs = 5_000): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const socket = connect({ host, port });
    let text = "";
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no greeting from ${host}:${port} within ${timeoutMs} ms`)));
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
      const end = text.indexOf("\n");
      if (end >= 0) {
        socket.destroy();
        resolvePromise(text.slice(0, end).trimEnd());
      }
    });
    socket.on("error", reject);
    socket.on("close", () => reject(new Error(`${host}:${port} closed without a greeting`)));
  });
}

function labelArgs(): string[] {
  return ["--label", TEST_LABEL, "--label", `${PID_LABEL}=${process.pid}`];
}

/** Runs the docker CLI and returns stdout; rejects with its stderr on a non-zero exit. */
async function docker(args: string[]): Promise<string> {
  const result = await dockerExit(args);
  if (result.exitCode !== 0) {
    throw new Error(`docker ${args.slice(0, 2).join(" ")} failed (exit ${result.exitCode}): ${result.stderr.trim()}`);
  }
  return result.stdout;
}

function dockerExit(args: string[]): Promise<ExecResult> {
  return new Promise((resolvePromise, reject) => {
    execFile("docker", args, { maxBuffer: 64 * 1024 * 1024, encoding: "utf8" }, (err, stdout, stderr) => {
      const code = (err as { code?: unknown } | null)?.code;
      if (err && typeof code !== "number") {
        reject(new Error(`docker ${args[0]} failed: ${err.message}`));
        return;
      }
      resolvePromise({ exitCode: typeof code === "number" ? code : 0, stdout, stderr });
    });
  });
}
