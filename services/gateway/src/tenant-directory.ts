import type { NatsConnection } from "@nats-io/transport-node";
import {
  buckets,
  decode,
  fromKeyToken,
  kvKey,
  liveTenantRecord,
  openBucket,
  readValue,
  type KV,
  type Logger,
  type TenantRecordHead,
} from "@corral/shared";

/** Answers "does this tenant exist?" from a watched in-memory set, falling back to KV on a miss. A tenant being deleted does not. */
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
      if (e.operation === "PUT" && liveTenantRecord(decode<TenantRecordHead>(e.value))) known.add(name);
      else known.delete(name);
    }
  })().catch((err: unknown) => log.warn("tenant watch ended", { err }));
  return {
    async exists(tenant) {
      if (known.has(tenant)) return true;
      const found = liveTenantRecord((await readValue<TenantRecordHead>(kv, kvKey(tenant)))?.value) !== undefined;
      if (found) known.add(tenant);
      return found;
    },
    stop() {
      watcher.stop();
    },
  };
}
