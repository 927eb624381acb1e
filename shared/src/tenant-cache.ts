import type { NatsConnection } from "@nats-io/transport-node";
import {
  buckets,
  decode,
  fromKeyToken,
  kvKey,
  liveTenantRecord,
  type TenantRecordHead,
} from "@corral/contracts";
import { openBucket, readValue } from "./kv.js";
import type { Logger } from "./log.js";

/**
 * The live tenants as a watched in-memory map, for hot paths (the gateway asks on every request). Holds only
 * each record's head (not tenancy's own marks, which can be a whole catalog). A tenant being deleted does not
 * exist.
 */
export interface TenantCache {
  /** What the watch knows: the live tenant's head, null when it does not exist, undefined when not known yet. */
  cached(name: string): TenantRecordHead | null | undefined;
  /** Reads the record now (the watch lags a write by a moment) and keeps what it read; undefined when not live. */
  fresh(name: string): Promise<TenantRecordHead | undefined>;
  stop(): void;
}

/** What is known of a tenant name at a bucket revision. */
interface Known {
  head: TenantRecordHead | null;
  revision: number;
}

const headOf = (record: TenantRecordHead | undefined): TenantRecordHead | null => {
  const live = liveTenantRecord(record);
  return live ? { tenant: live.tenant, ...(live.uid !== undefined ? { uid: live.uid } : {}) } : null;
};

export async function openTenantCache(nc: NatsConnection, log: Logger): Promise<TenantCache> {
  const kv = await openBucket(nc, buckets.tenants);
  const known = new Map<string, Known>();
  // A read that raced the watch must not put back an older state over a newer one.
  const learn = (name: string, next: Known) => {
    const current = known.get(name);
    if (!current || current.revision <= next.revision) known.set(name, next);
  };
  const watcher = await kv.watch({ key: ">" });
  void (async () => {
    for await (const e of watcher) {
      const head = e.operation === "PUT" ? headOf(decode<TenantRecordHead>(e.value)) : null;
      learn(fromKeyToken(e.key), { head, revision: e.revision });
    }
  })().catch((err: unknown) => log.warn("tenant watch ended", { err }));

  return {
    cached: (name) => known.get(name)?.head,
    async fresh(name) {
      const read = await readValue<TenantRecordHead>(kv, kvKey(name));
      const head = headOf(read?.value);
      // An absent key has no revision to order it by: left to the watch.
      if (read) learn(name, { head, revision: read.revision });
      return head ?? undefined;
    },
    stop() {
      watcher.stop();
    },
  };
}
