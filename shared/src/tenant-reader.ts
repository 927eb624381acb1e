import type { NatsConnection } from "@nats-io/transport-node";
import {
  buckets,
  fromKeyToken,
  kvKey,
  liveTenantRecord,
  type TenantRecordHead,
} from "@corral/contracts";
import { listKeys, openBucket, readValue, type Versioned } from "./kv.js";

/** What other services may read of the tenants tenancy keeps (tenancy alone writes them). */
export interface TenantReader {
  /** The stored record, a deletion's tombstone included; undefined when none. */
  record(name: string): Promise<Versioned<TenantRecordHead> | undefined>;
  /** The record of a tenant that exists; undefined for none and for a tenant being deleted. */
  live(name: string): Promise<TenantRecordHead | undefined>;
  /** Every name with a stored record (tombstones included), sorted. */
  names(): Promise<string[]>;
}

export async function openTenantReader(nc: NatsConnection): Promise<TenantReader> {
  const kv = await openBucket(nc, buckets.tenants);
  const record = (name: string) => readValue<TenantRecordHead>(kv, kvKey(name));
  return {
    record,
    live: async (name) => liveTenantRecord((await record(name))?.value),
    names: async () => (await listKeys(kv)).map(fromKeyToken).sort(),
  };
}
