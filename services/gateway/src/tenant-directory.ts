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
import { tenantUidOf } from "@corral/auth/internal";

/**
 * Answers "does this tenant exist, and which uid has it?" from a watched in-memory map, falling back to KV on a
 * miss. A tenant being deleted does not exist.
 */
export interface TenantDirectory {
  exists(tenant: string): Promise<boolean>;
  /** The tenant's uid as cached ("" for a record without one); undefined when it does not exist or is not cached. */
  cachedUidOf(tenant: string): string | undefined;
  /** The tenant's uid read from the bucket now (the watch lags a write by a moment); undefined when it does not exist. */
  freshUidOf(tenant: string): Promise<string | undefined>;
  stop(): void;
}

/** What is known of a tenant name at a bucket revision; no uid: it does not exist (deleted, or being deleted). */
interface Known {
  uid: string | undefined;
  revision: number;
}

export async function openTenantDirectory(nc: NatsConnection, log: Logger): Promise<TenantDirectory> {
  const kv: KV = await openBucket(nc, buckets.tenants);
  const known = new Map<string, Known>();
  // A read that raced the watch must not put back an older state over a newer one.
  const learn = (name: string, next: Known) => {
    const current = known.get(name);
    if (!current || current.revision <= next.revision) known.set(name, next);
  };
  const uidIn = (record: TenantRecordHead | undefined) => {
    const live = liveTenantRecord(record);
    return live ? tenantUidOf(live) : undefined;
  };
  const watcher = await kv.watch({ key: ">" });
  void (async () => {
    for await (const e of watcher) {
      const uid = e.operation === "PUT" ? uidIn(decode<TenantRecordHead>(e.value)) : undefined;
      learn(fromKeyToken(e.key), { uid, revision: e.revision });
    }
  })().catch((err: unknown) => log.warn("tenant watch ended", { err }));

  const freshUidOf = async (tenant: string) => {
    const read = await readValue<TenantRecordHead>(kv, kvKey(tenant));
    const uid = uidIn(read?.value);
    // An absent key has no revision to order it by: left to the watch.
    if (read) learn(tenant, { uid, revision: read.revision });
    return uid;
  };
  return {
    async exists(tenant) {
      return known.get(tenant)?.uid !== undefined || (await freshUidOf(tenant)) !== undefined;
    },
    cachedUidOf: (tenant) => known.get(tenant)?.uid,
    freshUidOf,
    stop() {
      watcher.stop();
    },
  };
}
