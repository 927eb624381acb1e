import type { NatsConnection } from "@nats-io/transport-node";
import { openTenantReader } from "@corral/shared";
import { tenantUidOf, type TenantBinding } from "../domain/tenant-binding.js";

/** Reads tenant records (through tenancy's reader) at login, to bind a token to the tenant it names. */
export interface TenantRecords {
  /** The binding of the tenant as it is now; undefined when it does not exist (or is being deleted). */
  bindingOf(name: string): Promise<TenantBinding | undefined>;
}

export async function openTenantRecords(nc: NatsConnection): Promise<TenantRecords> {
  const tenants = await openTenantReader(nc);
  return {
    async bindingOf(name) {
      const record = await tenants.live(name);
      return record ? { name, uid: tenantUidOf(record) } : undefined;
    },
  };
}
