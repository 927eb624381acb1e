import { createClient } from "redis";
import type { Logger } from "@corral/shared";

function newClient(url: string, name: string) {
  return createClient({
    url,
    name,
    socket: { reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000), connectTimeout: 5000 },
  });
}

export type RedisClient = ReturnType<typeof newClient>;

/**
 * Connects a Redis client that reconnects forever (backoff up to 2 s). Errors while disconnected are logged
 * once per outage rather than on every retry.
 */
export async function connectRedis(url: string, log: Logger, name: string): Promise<RedisClient> {
  const client = newClient(url, name);
  let failing = false;
  client.on("error", (err: unknown) => {
    if (!failing) log.warn("redis connection problem", { name, err });
    failing = true;
  });
  client.on("ready", () => {
    if (failing) log.info("redis connection restored", { name });
    failing = false;
  });
  await client.connect();
  return client;
}
