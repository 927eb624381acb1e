import { createWriteStream, mkdirSync } from "node:fs";
import type { WriteStream } from "node:fs";
import { join } from "node:path";
import { redactUrls, withUrlCredentials } from "@corral/contracts";
import type { BusCredentials } from "./bus-credentials.js";
import { loadOrCreateBusCredentials } from "./bus-credentials.js";
import { natsUsers } from "./bus-permissions.js";
import type { LauncherConfig } from "./launcher-config.js";
import { isPortFree } from "./ports.js";
import { mapServices, type CorralService } from "./service-access.js";
import { startRedis } from "./servers.js";
import { keepRedisRunning, type KeptServer } from "./redis-keeper.js";
import { clusterStoreDir, startEmbeddedNats } from "./embedded-nats.js";

/** The NATS and Redis the launcher's services use: embedded child processes or configured URLs. */
export interface EmbeddedServers {
  /** NATS URL of the launcher's own setup: with the admin user's credentials when the server is embedded. */
  natsUrl: string;
  /** NATS URL of provisioners: with the provisioner user's credentials when embedded; else `natsUrl`. */
  provisionerNatsUrl: string;
  /** NATS URL of each service: with its own user's credentials when embedded; else `natsUrl`. */
  serviceNatsUrls: Record<CorralService, string>;
  /** Redis URL: with the password when the server is embedded. */
  redisUrl: string;
  /** Resolves with the server's name if an embedded nats-server dies while not being stopped (redis-server is restarted). */
  crashed: Promise<string>;
  /** Stops redis, then nats (embedded ones only). Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts nats-server (JetStream, store in `<dataDir>/nats`, port 4222 when free; or a cluster of
 * `nats.embedded.nodes`, embedded-nats.ts) and redis-server
 * (append-only file in `<dataDir>/redis`, port 6379 when free) unless their URLs are configured. Both require
 * the installation's credentials (bus-credentials.ts, made at the first start). Server logs go to
 * `<dataDir>/logs/`; nats errors are also echoed through `notice`, and so is each step, one line each.
 */
export async function startEmbeddedServers(config: LauncherConfig, notice: (msg: string) => void): Promise<EmbeddedServers> {
  let loading: Promise<BusCredentials> | undefined;
  const credentials = (): Promise<BusCredentials> => (loading ??= credentialsOf(config.dataDir, notice));
  const logDir = join(config.dataDir, "logs");
  mkdirSync(logDir, { recursive: true });
  const logs: WriteStream[] = [];
  const logTo = (file: string, echo?: (line: string) => boolean): ((line: string) => void) => {
    const stream = createWriteStream(join(logDir, file), { flags: "a" });
    logs.push(stream);
    return (line) => {
      stream.write(`${line}\n`);
      if (echo?.(line)) {
        notice(`nats-server: ${line}`);
      }
    };
  };

  let stopping = false;
  /** Servers in start order; a `kept` one is started again when it dies rather than counted as crashed. */
  const started: (KeptServer & { kept?: true })[] = [];
  const stop = async (): Promise<void> => {
    stopping = true;
    for (const { handle } of [...started].reverse()) {
      await handle.stop();
    }
    await Promise.all(logs.map((s) => new Promise((resolve) => s.end(resolve))));
  };
  let stopped: Promise<void> | undefined;

  try {
    let natsUrl: string;
    let provisionerNatsUrl: string;
    let serviceNatsUrls: Record<CorralService, string>;
    if (config.natsUrl) {
      natsUrl = provisionerNatsUrl = config.natsUrl;
      serviceNatsUrls = mapServices(() => config.natsUrl ?? "");
      notice(`using NATS at ${redactUrls(natsUrl)}`);
    } else {
      const { admin, services, provisioner } = await credentials();
      const port = config.natsPort ?? "<any free port>";
      const what =
        config.natsNodes === 1
          ? `nats-server on 127.0.0.1:${port} (JetStream store ${join(config.dataDir, "nats")}`
          : `${config.natsNodes} nats-servers as a JetStream cluster, from 127.0.0.1:${port} (stores ${clusterStoreDir(config.dataDir)}/node-<i>`;
      notice(`starting ${what}; log ${join(logDir, "nats.log")}; a taken port: any free one)`);
      const nats = await startEmbeddedNats({
        nodes: config.natsNodes,
        dataDir: config.dataDir,
        port: config.natsPort,
        syncAlways: config.jetstreamSyncAlways,
        detached: true,
        users: natsUsers(await credentials()),
        onLine: logTo("nats.log", (line) => /\[(ERR|FTL)\]/.test(line)),
        onProgress: notice,
      });
      started.push({ name: "nats-server", handle: nats });
      natsUrl = withUrlCredentials(nats.url, admin);
      provisionerNatsUrl = withUrlCredentials(nats.url, provisioner);
      serviceNatsUrls = mapServices((service) => withUrlCredentials(nats.url, services[service]));
      const sync = config.jetstreamSyncAlways ? "always" : "every 2 min";
      notice(`nats-server ready at ${nats.url} (a user per service, ${provisioner.user} and ${admin.user}; JetStream sync ${sync})`);
    }
    let redisUrl: string;
    if (config.redisUrl) {
      redisUrl = config.redisUrl;
      notice(`using Redis at ${redactUrls(redisUrl)}`);
    } else {
      const port = await portIfFree(config.redisPort);
      notice(`starting redis-server on 127.0.0.1:${port ?? "<any free port>"} (data ${join(config.dataDir, "redis")}; log ${join(logDir, "redis.log")})`);
      const redisOptions = {
        dir: join(config.dataDir, "redis"),
        persist: true,
        detached: true,
        password: (await credentials()).redisPassword,
        onLine: logTo("redis.log"),
        onProgress: notice,
      };
      const redis = await startRedis({ ...redisOptions, port });
      const kept = { name: "redis-server", handle: redis, kept: true as const };
      started.push(kept);
      keepRedisRunning(kept, { ...redisOptions, port: redis.port }, notice, () => stopping);
      redisUrl = redis.url;
      notice(`redis-server ready at ${redactUrls(redis.url)} (password required)`);
    }
    const crashed = new Promise<string>((resolve) => {
      for (const { name, handle, kept } of started) {
        if (kept) continue;
        void handle.exited.then(() => {
          if (!stopping) {
            resolve(name);
          }
        });
      }
    });
    return { natsUrl, provisionerNatsUrl, serviceNatsUrls, redisUrl, crashed, stop: () => (stopped ??= stop()) };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function credentialsOf(dataDir: string, notice: (msg: string) => void): Promise<BusCredentials> {
  const { credentials, path, created } = await loadOrCreateBusCredentials(dataDir);
  notice(`${created ? "made new" : "using the"} bus credentials in ${path} (mode 0600)`);
  return credentials;
}

/** `port` when it is free; undefined (any free port) otherwise. */
async function portIfFree(port: number | undefined): Promise<number | undefined> {
  return port !== undefined && (await isPortFree(port)) ? port : undefined;
}
