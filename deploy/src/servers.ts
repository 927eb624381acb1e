import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { withUrlCredentials } from "@corral/contracts";
import { ensureNatsServer, ensureRedisServer } from "./binaries.js";
import type { NatsPermissions } from "./bus-permissions.js";
import { freePort } from "./ports.js";
import { redisPing, ServerStartError, waitUntilReady } from "./readiness.js";
import type { ServerProcess } from "./server-process.js";
import { spawnServer } from "./server-process.js";

/** A running server started by {@link startNats} or {@link startRedis}. */
export interface ServerHandle {
  /** Client URL, for example `nats://127.0.0.1:40123` or `redis://127.0.0.1:40124`. */
  url: string;
  port: number;
  pid: number;
  /** Settles when the server process has exited, whether stopped or crashed. */
  exited: Promise<void>;
  /** Stops the server (SIGTERM, SIGKILL after 10 s) and removes its temporary files. Idempotent. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A running nats-server. */
export interface NatsHandle extends ServerHandle {
  /** Monitoring endpoint, for example `http://127.0.0.1:40125` (`/healthz`, `/jsz`, `/varz`). */
  monitorUrl: string;
  /** JetStream store directory, when JetStream is on. */
  storeDir?: string;
}

/** Options shared by the server starters. */
export interface CommonServerOptions {
  /** Binary cache and lock directory. @default `<repo>/.corral` or `CORRAL_DATA_DIR` */
  stateDir?: string;
  /** Own process group, so a terminal's Ctrl-C does not reach the server directly. @default false */
  detached?: boolean;
  /** Receives every line the server prints. */
  onLine?: (line: string) => void;
  /** Receives a line for each slow preparation step (fetching or installing the server). */
  onProgress?: (line: string) => void;
  /** Give up when the server is not ready after this long. @default 30_000 ms */
  startTimeoutMs?: number;
}

/** Options for {@link startNats}. */
export interface NatsOptions extends CommonServerOptions {
  /** Enable JetStream. @default false */
  jetstream?: boolean;
  /** JetStream store; kept on stop. @default a temporary directory, removed on stop */
  storeDir?: string;
  /** Client port. @default any free port */
  port?: number;
  /** `sync_interval: always`: fsync every JetStream write before acknowledging it. @default true */
  syncAlways?: boolean;
  /** Largest message the server accepts, in bytes. @default 8 MiB */
  maxPayloadBytes?: number;
  /** Users clients must log in as (`authorization { users }`); none: any client is let in. @default none */
  users?: NatsUser[];
  /** Run as one node of a cluster (nats-cluster.ts starts whole clusters). @default a lone server */
  cluster?: NatsClusterMembership;
}

/** How one node of a loopback nats-server cluster joins the others. */
export interface NatsClusterMembership {
  /** The cluster's name, the same on every node. */
  name: string;
  /** This node's `server_name`, unique in the cluster (JetStream's replicas are placed by it). */
  serverName: string;
  /** This node's route (cluster) port on 127.0.0.1. */
  port: number;
  /** Route ports of the other nodes on 127.0.0.1. */
  routePorts: number[];
}

/** A nats-server user; without `permissions` it may do anything. */
export interface NatsUser {
  user: string;
  password: string;
  permissions?: NatsPermissions;
}

/** Options for {@link startRedis}. */
export interface RedisOptions extends CommonServerOptions {
  /** Port. @default any free port */
  port?: number;
  /** Working directory (the AOF lives here when persisting). @default a temporary directory, removed on stop */
  dir?: string;
  /** Keep data in an append-only file under `dir`; otherwise no persistence at all. @default false */
  persist?: boolean;
  /**
   * Clients must `AUTH` with this (`requirepass`, given in a mode-0600 config file so no process listing shows
   * it); the handle's `url` then carries it (`redis://:<password>@127.0.0.1:<port>`). @default none
   */
  password?: string;
}

const STOP_GRACE_MS = 10_000;

/**
 * Go's garbage collector target for nats-server (`GOGC`) unless the environment sets one. Go's default (100)
 * collects each time the heap doubles; JetStream's per-message garbage made that about 15% of the server's CPU on
 * the task path (bench/clusters/throughput.ts: 0.82-0.89 against 0.98-1.03 CPU seconds per run). nats-server's
 * live heap is small, so the larger heap this allows costs little memory.
 */
export const NATS_SERVER_GOGC = "400";

/**
 * The V8 flags every Corral service and provisioner runs with (`NODE_OPTIONS`). A young generation of up to 32 MB
 * per semi-space instead of V8's default 16: the task path allocates a message, a record and an actor step per
 * result, and scavenges that often took 6-9% of the clusters service's CPU (bench/clusters/throughput.ts,
 * alternated runs with `sync_interval: always`: about 4% more tasks per second). Costs up to 48 MB more per process.
 */
export const SERVICE_NODE_OPTIONS = "--max-semi-space-size=32";

/** The environment a Corral node process runs with: {@link SERVICE_NODE_OPTIONS} added to any `NODE_OPTIONS` given. */
export function serviceNodeEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const given = env["NODE_OPTIONS"] ?? "";
  if (given.includes("--max-semi-space-size")) return env;
  return { ...env, NODE_OPTIONS: given ? `${given} ${SERVICE_NODE_OPTIONS}` : SERVICE_NODE_OPTIONS };
}

/** The environment a nats-server runs with: this process's, with {@link NATS_SERVER_GOGC} unless GOGC is set. */
export function natsServerEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return env["GOGC"] ? env : { ...env, GOGC: NATS_SERVER_GOGC };
}

/**
 * Starts a nats-server (2.10+) on 127.0.0.1 from a generated config, waiting until it accepts
 * clients (and, with JetStream, until `/healthz?js-enabled-only=true` answers 200).
 */
export async function startNats(opts: NatsOptions = {}): Promise<NatsHandle> {
  const binary = await ensureNatsServer(opts.stateDir, opts.onProgress);
  const work = await mkdtemp(join(tmpdir(), "corral-nats-"));
  const storeDir = opts.jetstream ? resolve(opts.storeDir ?? join(work, "jetstream")) : undefined;
  try {
    if (storeDir) {
      await mkdir(storeDir, { recursive: true });
    }
    const confPath = join(work, "nats.conf");
    await writeFile(confPath, natsConfig(opts, work, storeDir), { mode: 0o600 });
    const server = spawnServer(binary, ["-c", confPath], { detached: opts.detached, onLine: opts.onLine, env: natsServerEnv() });
    const timeoutMs = opts.startTimeoutMs ?? 30_000;
    try {
      const ports = await waitUntilReady(server, "nats-server", () => readPortsFile(work, server.pid), timeoutMs);
      const url = ports.nats[0];
      const monitorUrl = ports.monitoring[0];
      if (!url || !monitorUrl) {
        throw new ServerStartError(`nats-server wrote an unexpected ports file`, JSON.stringify(ports));
      }
      if (storeDir) {
        // A cluster node is healthy once it knows the JetStream meta leader and its streams have caught up.
        const health = `${monitorUrl}/healthz${opts.cluster ? "" : "?js-enabled-only=true"}`;
        await waitUntilReady(server, "nats-server JetStream", async () => ((await fetch(health)).ok ? true : undefined), timeoutMs);
      }
      const handle = makeHandle(server, url, async () => rm(work, { recursive: true, force: true }));
      return { ...handle, monitorUrl, storeDir };
    } catch (err) {
      await server.terminate(STOP_GRACE_MS);
      throw err;
    }
  } catch (err) {
    await rm(work, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Starts a redis-server on 127.0.0.1 and waits until it answers PING. Without a fixed port it
 * picks a free one and retries once with another when the port was taken meanwhile.
 */
export async function startRedis(opts: RedisOptions = {}): Promise<ServerHandle> {
  const binary = await ensureRedisServer(opts.stateDir, opts.onProgress);
  const tempDir = opts.dir ? undefined : await mkdtemp(join(tmpdir(), "corral-redis-"));
  const dir = resolve(opts.dir ?? tempDir ?? ".");
  // mkdtemp makes the directory 0700: only this user reads the password in it.
  const confDir = opts.password === undefined ? undefined : await mkdtemp(join(tmpdir(), "corral-redis-conf-"));
  const cleanup = async (): Promise<void> => {
    for (const d of [tempDir, confDir]) {
      if (d) {
        await rm(d, { recursive: true, force: true });
      }
    }
  };
  try {
    await mkdir(dir, { recursive: true });
    const confPath = confDir ? join(confDir, "redis.conf") : undefined;
    if (confPath) {
      await writeFile(confPath, `requirepass ${redisConfString(opts.password ?? "")}\n`, { mode: 0o600 });
    }
    const attempts = opts.port === undefined ? 2 : 1;
    for (let attempt = 1; ; attempt++) {
      const port = opts.port ?? (await freePort());
      try {
        return await startRedisOnce(binary, { port, dir, confPath }, opts, cleanup);
      } catch (err) {
        const clash = err instanceof ServerStartError && /address already in use/i.test(err.output);
        if (!clash || attempt >= attempts) {
          throw err;
        }
      }
    }
  } catch (err) {
    await cleanup();
    throw err;
  }
}

async function startRedisOnce(
  binary: string,
  where: { port: number; dir: string; confPath: string | undefined },
  opts: RedisOptions,
  cleanup: () => Promise<void>,
): Promise<ServerHandle> {
  const { port, dir, confPath } = where;
  const persistence = opts.persist ? ["--appendonly", "yes"] : ["--save", "", "--appendonly", "no"];
  const args = [...(confPath ? [confPath] : []), "--bind", "127.0.0.1", "--port", String(port), "--dir", dir, ...persistence];
  const server = spawnServer(binary, args, { detached: opts.detached, onLine: opts.onLine });
  try {
    const ready = async () => ((await redisPing(port, { password: opts.password })) ? true : undefined);
    await waitUntilReady(server, "redis-server", ready, opts.startTimeoutMs ?? 30_000);
  } catch (err) {
    await server.terminate(STOP_GRACE_MS);
    throw err;
  }
  const url = `redis://127.0.0.1:${port}`;
  return makeHandle(server, opts.password === undefined ? url : withUrlCredentials(url, { user: "", password: opts.password }), cleanup);
}

/** A redis.conf argument in double quotes (`\` and `"` escaped), so any password stays one argument. */
function redisConfString(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

function makeHandle(server: ServerProcess, url: string, cleanup: () => Promise<void>): ServerHandle {
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= server.terminate(STOP_GRACE_MS).then(cleanup);
    return stopping;
  };
  const exited = server.exited.then(() => undefined);
  return { url, port: Number(new URL(url).port), pid: server.pid, exited, stop, [Symbol.asyncDispose]: stop };
}

function natsConfig(opts: NatsOptions, portsDir: string, storeDir: string | undefined): string {
  const lines = [
    `host: 127.0.0.1`,
    `port: ${opts.port ?? -1}`,
    `http: "127.0.0.1:-1"`,
    `ports_file_dir: ${JSON.stringify(portsDir)}`,
    `max_payload: ${opts.maxPayloadBytes ?? 8 * 1024 * 1024}`,
  ];
  if (opts.cluster) {
    const { name, serverName, port, routePorts } = opts.cluster;
    const routes = routePorts.map((p) => JSON.stringify(`nats-route://127.0.0.1:${p}`));
    lines.push(`server_name: ${JSON.stringify(serverName)}`);
    lines.push(`cluster {`, `  name: ${JSON.stringify(name)}`, `  listen: "127.0.0.1:${port}"`, `  routes: [${routes.join(", ")}]`, `}`);
  }
  if (storeDir) {
    lines.push(`jetstream {`, `  store_dir: ${JSON.stringify(storeDir)}`);
    if (opts.syncAlways ?? true) {
      lines.push(`  sync_interval: always`);
    }
    lines.push(`}`);
  }
  if (opts.users?.length) {
    // The config format reads JSON; quoted strings are never taken for `$variables` (subjects start with `$`).
    lines.push(`authorization {`, `  users = [`, ...opts.users.map((u) => `    ${JSON.stringify(u)}`), `  ]`, `}`);
  }
  return `${lines.join("\n")}\n`;
}

interface PortsFile {
  nats: string[];
  monitoring: string[];
}

/** nats-server writes `<dir>/<exe>_<pid>.ports` once it listens. */
async function readPortsFile(dir: string, pid: number): Promise<PortsFile | undefined> {
  const name = (await readdir(dir)).find((f) => f.endsWith(`_${pid}.ports`));
  if (!name) {
    return undefined;
  }
  const parsed = JSON.parse(await readFile(join(dir, name), "utf8")) as Partial<PortsFile>;
  return { nats: parsed.nats ?? [], monitoring: parsed.monitoring ?? [] };
}
