import type { NatsConnection } from "@nats-io/transport-node";
import { buckets, kvKey, openBucket, readValue, type KV } from "@corral/shared";

/** Live clusters and nodes of a tenant, kept by the clusters service. */
export interface TenantUsage {
  clusters: number;
  nodes: number;
}

export interface UsageStore {
  get(tenant: string): Promise<TenantUsage>;
}

class KvUsageStore implements UsageStore {
  constructor(private readonly kv: KV) {}
  async get(tenant: string) {
    return (await readValue<TenantUsage>(this.kv, kvKey(tenant)))?.value ?? { clusters: 0, nodes: 0 };
  }
}

export async function openUsageStore(nc: NatsConnection): Promise<UsageStore> {
  return new KvUsageStore(await openBucket(nc, buckets.usage));
}
