import type { NatsConnection } from "@nats-io/transport-node";
import { buckets, kvKey } from "@corral/contracts";
import { openBucket, readValue, type KV } from "@corral/shared";
import { NO_USAGE, type TenantUsage } from "../domain/quota.js";

/** A tenant's live clusters and nodes as the clusters service counts them (tenancy checks lowered quotas with it). */
export interface UsageReader {
  get(tenant: string): Promise<TenantUsage>;
}

export async function readUsage(kv: KV, tenant: string): Promise<TenantUsage> {
  return (await readValue<TenantUsage>(kv, kvKey(tenant)))?.value ?? NO_USAGE;
}

export async function openUsageReader(nc: NatsConnection): Promise<UsageReader> {
  const kv = await openBucket(nc, buckets.usage);
  return { get: (tenant) => readUsage(kv, tenant) };
}
