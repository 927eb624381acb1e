import { createWriteStream, mkdirSync } from "node:fs";
import type { WriteStream } from "node:fs";
import { join } from "node:path";
import type { LauncherConfig } from "./launcher-config.js";
import { isPortFree } from "./ports.js";
import type { ServerHandle } from "./servers.js";
import { startNats, startRedis } from "./servers.js";

/** The NATS and Redis the launcher's services use: embedded child processes or configured URLs. */
export interface EmbeddedServers {
  natsUrl: string;
  redisUrl: string;
  /** Resolves with the server's name if an embedded server dies while not being stopped. */
  crashed: Promise<string>;
  /** Stops redis, then nats (embedded ones only). Idempotent. */
  stop(): Promise<void>;
}

const NATS_PORT = 4222;
const REDIS_PORT = 6379;

/**
 * Starts nats-server (JetStream, store in `<dataDir>/nats`, port 4222 when free) and redis-server
 * (append-only file in `<dataDir>/redis`, port 6379 when free) unless their URLs are configured.
 * Server logs go to `<dataDir>/logs/`; nats errors are also echoed through `notice`.
 */
export async function startEmbeddedServers(config: LauncherConfig, notice: (msg: string) => void): Promise<EmbeddedServers> {
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
  const started: { name: string; handle: ServerHandle }[] = [];
  const stop = async (): Promise<void> => {
    stopping = true;
    for (const { handle } of [...started].reverse()) {
      await handle.stop();
    }
    await Promise.all(logs.map((s) => new Promise((resolve) => s.end(resolve))));
  };
  let stopped: Promise<void> | undefined;

  try {
    let natsUrl = config.natsUrl;
    if (!natsUrl) {
      const nats = await startNats({
        jetstream: true,
        storeDir: join(config.dataDir, "nats"),
        port: (await isPortFree(NATS_PORT)) ? NATS_PORT : undefined,
        syncAlways: config.jetstreamSyncAlways,
        detached: true,
        onLine: logTo("nats.log", (line) => /\[(ERR|FTL)\]/.test(line)),
      });
      started.push({ name: "nats-server", handle: nats });
      natsUrl = nats.url;
      notice(`nats-server ${nats.url} (JetStream store ${nats.storeDir}, sync ${config.jetstreamSyncAlways ? "always" : "every 2 min"}; log ${join(logDir, "nats.log")})`);
    } else {
      notice(`using NATS at ${natsUrl}`);
    }
    let redisUrl = config.redisUrl;
    if (!redisUrl) {
      const redis = await startRedis({
        dir: join(config.dataDir, "redis"),
        persist: true,
        port: (await isPortFree(REDIS_PORT)) ? REDIS_PORT : undefined,
        detached: true,
        onLine: logTo("redis.log"),
      });
      started.push({ name: "redis-server", handle: redis });
      redisUrl = redis.url;
      notice(`redis-server ${redis.url} (data ${join(config.dataDir, "redis")}; log ${join(logDir, "redis.log")})`);
    } else {
      notice(`using Redis at ${redisUrl}`);
    }
    const crashed = new Promise<string>((resolve) => {
      for (const { name, handle } of started) {
        void handle.exited.then(() => {
          if (!stopping) {
            resolve(name);
          }
        });
      }
    });
    return { natsUrl, redisUrl, crashed, stop: () => (stopped ??= stop()) };
  } catch (err) {
    await stop();
    throw err;
  }
}
