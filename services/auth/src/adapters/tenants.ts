import type { NatsConnection } from "@nats-io/transport-node";
import { buckets, kvKey, liveTenantRecord, openBucket, readValue, type TenantRecordHead } from "@corral/shared";
import { tenantUidOf, type TenantBinding } from "../domain/tenant-binding.js";

/** Reads tenant records (`corral_tenants`) at login, to bind a token to the tenant it names. */
export interface TenantRecords {
  /** The binding of the tenant as it is now; undefined when it does not exist (or is being deleted). */
  bindingOf(name: string): Promise<TenantBinding | undefined>;
}

export async function openTenantRecords(nc: NatsConnection): Promise<TenantRecords> {
  const kv = await openBucket(nc, buckets.tenants);
  return {
    async bindingOf(name) {
      const record = liveTenantRecord((await readValue<TenantRecordHead>(kv, kvKey(name)))?.value);
      return record ? { name, uid: tenantUidOf(record) } : undefined;
    },
  };
}
