import type { NatsConnection } from "@nats-io/transport-node";
import { buckets, fromKeyToken, kvKey, openBucket, readValue, type KV, type Logger } from "@corral/shared";

/** Answers "does this tenant exist?" from a watched in-memory set, falling back to KV on a miss. */
export interface TenantDirectory {
  exists(tenant: string): Promise<boolean>;
  stop(): void;
}

export async function openTenantDirectory(nc: NatsConnection, log: Logger): Promise<TenantDirectory> {
  const kv: KV = await openBucket(nc, buckets.tenants);
  const known = new Set<string>();
  const watcher = await kv.watch({ key: ">" });
  void (async () => {
    for await (const e of watcher) {
      const name = fromKeyToken(e.key);
      if (e.operation === "PUT") known.add(name);
      else known.delete(name);
    }
  })().catch((err: unknown) => log.warn("tenant watch ended", { err }));
  return {
    async exists(tenant) {
      if (known.has(tenant)) return true;
      const found = (await readValue(kv, kvKey(tenant))) !== undefined;
      if (found) known.add(tenant);
      return found;
    },
    stop() {
      watcher.stop();
    },
  };
}
