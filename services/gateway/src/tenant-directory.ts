import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "@corral/shared";
import { tenantUidOf } from "@corral/auth/internal";
import { openTenantCache } from "@corral/tenancy/readers";

/**
 * Answers "does this tenant exist, and which uid has it?" from tenancy's watched tenant cache, falling back to a
 * fresh read on a miss. A tenant being deleted does not exist.
 */
export interface TenantDirectory {
  exists(tenant: string): Promise<boolean>;
  /** The tenant's uid as cached ("" for a record without one); undefined when it does not exist or is not cached. */
  cachedUidOf(tenant: string): string | undefined;
  /** The tenant's uid read from the bucket now (the watch lags a write by a moment); undefined when it does not exist. */
  freshUidOf(tenant: string): Promise<string | undefined>;
  stop(): void;
}

export async function openTenantDirectory(nc: NatsConnection, log: Logger): Promise<TenantDirectory> {
  const tenants = await openTenantCache(nc, log);
  const freshUidOf = async (tenant: string) => {
    const head = await tenants.fresh(tenant);
    return head ? tenantUidOf(head) : undefined;
  };
  const cachedUidOf = (tenant: string) => {
    const head = tenants.cached(tenant);
    return head ? tenantUidOf(head) : undefined;
  };
  return {
    async exists(tenant) {
      return cachedUidOf(tenant) !== undefined || (await freshUidOf(tenant)) !== undefined;
    },
    cachedUidOf,
    freshUidOf,
    stop: () => tenants.stop(),
  };
}
