import type { NatsConnection } from "@nats-io/transport-node";
import { ConflictError, buckets, kvKey, modifyValue, openBucket, readValue, RevisionCache, type KV, type Tenant } from "@corral/shared";

/** Live clusters and nodes per tenant (`corral_usage`, read by tenancy when quotas are lowered). */
export interface TenantUsage {
  clusters: number;
  nodes: number;
}

export interface UsageStore {
  /** Adds a cluster of `nodes` nodes, or 409 when the tenant's quotas would be exceeded. */
  reserve(tenant: Tenant, nodes: number): Promise<void>;
  /** Takes a cluster of `nodes` nodes back out. */
  release(tenant: string, nodes: number): Promise<void>;
  /** Sets the usage to a recount (repairs a reservation a crash left behind). */
  set(tenant: string, usage: TenantUsage): Promise<void>;
  get(tenant: string): Promise<TenantUsage>;
}

export async function openUsageStore(nc: NatsConnection): Promise<UsageStore> {
  const kv: KV = await openBucket(nc, buckets.usage);
  const zero = { clusters: 0, nodes: 0 };
  const cache = new RevisionCache(1_000);
  return {
    async reserve(tenant, nodes) {
      await modifyValue<TenantUsage>(kv, kvKey(tenant.name), (current) => {
        const used = current?.value ?? zero;
        if (tenant.maxClusters !== undefined && used.clusters + 1 > tenant.maxClusters) {
          throw new ConflictError(
            `tenant ${tenant.name} has ${used.clusters} of its ${tenant.maxClusters} clusters (maxClusters)`,
            { quota: "maxClusters" },
            "quota_exceeded",
          );
        }
        if (tenant.maxNodes !== undefined && used.nodes + nodes > tenant.maxNodes) {
          throw new ConflictError(
            `tenant ${tenant.name} uses ${used.nodes} of its ${tenant.maxNodes} nodes (maxNodes); ${nodes} more do not fit`,
            { quota: "maxNodes" },
            "quota_exceeded",
          );
        }
        return { put: { clusters: used.clusters + 1, nodes: used.nodes + nodes } };
      }, { cache });
    },
    async release(tenant, nodes) {
      await modifyValue<TenantUsage>(kv, kvKey(tenant), (current) => {
        const used = current?.value ?? zero;
        return { put: { clusters: Math.max(0, used.clusters - 1), nodes: Math.max(0, used.nodes - nodes) } };
      }, { cache });
    },
    async set(tenant, usage) {
      await modifyValue<TenantUsage>(kv, kvKey(tenant), (current) =>
        current && current.value.clusters === usage.clusters && current.value.nodes === usage.nodes
          ? { keep: true }
          : { put: usage },
        { cache },
      );
    },
    async get(tenant) {
      return (await readValue<TenantUsage>(kv, kvKey(tenant)))?.value ?? zero;
    },
  };
}
