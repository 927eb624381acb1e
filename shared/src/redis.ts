import { createRequire } from "node:module";
import type { RedisClientType } from "redis";
import { UnavailableError } from "@corral/contracts";
import type { Logger } from "./log.js";

/** The Redis client every service uses (`createClient()` from `redis`). */
export type RedisClient = RedisClientType;

export interface OpenRedisOptions {
  url: string;
  log: Logger;
  /** `CLIENT SETNAME`, and the `name` field of the outage log lines. */
  name: string;
}

type RedisModule = typeof import("redis");
let redisModule: RedisModule | undefined;

/**
 * The `redis` package, loaded at the first `openRedis`: most processes never open Redis, and loading the package
 * costs each of them about 11 MB.
 */
function loadRedis(): RedisModule {
  redisModule ??= createRequire(import.meta.url)("redis") as RedisModule;
  return redisModule;
}

/** How long a service's start waits for Redis before it goes on without it (and says what is unavailable). */
export const REDIS_START_WAIT_MS = 3_000;

/** How long one Redis call may take, by default, before its caller is told Redis is unavailable. */
export const REDIS_CALL_TIMEOUT_MS = 2_000;

export interface RedisCallOptions {
  /** Logs the failure. @default not logged */
  log?: Logger;
  /** @default REDIS_CALL_TIMEOUT_MS */
  timeoutMs?: number;
}

/**
 * A Redis client that never makes a caller wait for Redis: it connects in the background (a service starts while
 * Redis is down) and reconnects forever, backing off up to 2 s; while it is not connected every command fails at
 * once instead of queuing until Redis returns (`disableOfflineQueue`). Outages are logged once each.
 */
export function openRedis(options: OpenRedisOptions): RedisClient {
  const { log, name } = options;
  const client = loadRedis().createClient({
    url: options.url,
    name,
    disableOfflineQueue: true,
    socket: { reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000), connectTimeout: 5000 },
  }) as RedisClient;
  let failing = false;
  client.on("error", (err: unknown) => {
    if (!failing) log.warn("redis connection problem", { name, err });
    failing = true;
  });
  client.on("ready", () => {
    if (failing) log.info("redis connection restored", { name });
    failing = false;
  });
  // Rejects only when the client is closed before it ever connected; the error listener has reported why.
  client.connect().catch(() => {});
  return client;
}

/**
 * `client.multi()`, or an error at once when the client is not connected: a MULTI ... EXEC waits for the next
 * reconnect attempt even with the offline queue off.
 */
export function connectedMulti(client: RedisClient): ReturnType<RedisClient["multi"]> {
  if (!client.isReady) throw new Error("Redis is not connected");
  return client.multi();
}

/** Resolves true once `client` is connected, false when it is not within `timeoutMs`. */
export function redisReady(client: RedisClient, timeoutMs: number): Promise<boolean> {
  if (client.isReady) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ready: boolean) => {
      clearTimeout(timer);
      client.off("ready", onReady);
      resolve(ready);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    client.on("ready", onReady);
  });
}

/**
 * Runs a Redis call; when Redis fails or has not answered within the timeout (a hung server answers nothing, and
 * node-redis does not time out a command already sent), throws a 503 "Redis is unavailable: <effect>", e.g.
 * `redisCall("node usage cannot be read", () => store.usage(...))`.
 */
export async function redisCall<T>(effect: string, call: () => Promise<T>, options: RedisCallOptions = {}): Promise<T> {
  const { log } = options;
  const timeoutMs = options.timeoutMs ?? REDIS_CALL_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([call(), deadline]);
  } catch (err) {
    log?.warn("redis call failed", { effect, err });
    throw new UnavailableError(`Redis is unavailable: ${effect}; try again later`);
  } finally {
    clearTimeout(timer);
  }
}
