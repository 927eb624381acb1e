import type { NatsConnection } from "@nats-io/transport-node";
import { buckets, kvKey, openBucket, readValue, type KV } from "@corral/shared";

/** The clusters service's bucket (key `kvKey(clusterId)`); the provisioner only reads it. */
export const openClustersBucket = (nc: NatsConnection): Promise<KV> => openBucket(nc, buckets.clusters);

/** The fields of the clusters service's `ClusterRecord` a provisioner reads; its status is the actor's state. */
export interface ClusterView {
  tenant: string;
  actor?: { value?: unknown };
}

const TERMINATED = "terminated";

/** A cluster's record, or undefined when it is not stored (cluster ids are never reused: a purged tenant's). */
export async function readCluster(clusters: KV, clusterId: string): Promise<ClusterView | undefined> {
  return (await readValue<ClusterView>(clusters, kvKey(clusterId)))?.value;
}

/**
 * Why what a provisioner keeps for a cluster of `tenant` (containers, node directories) is left over: no record
 * (the tenant was deleted and purged), a record of another tenant, or a terminated cluster; undefined while the
 * cluster lives.
 */
export function orphanReason(record: ClusterView | undefined, tenant: string): string | undefined {
  if (!record) return "its cluster is not stored";
  if (record.tenant !== tenant) return `its cluster belongs to tenant ${record.tenant}`;
  if (record.actor?.value === TERMINATED) return "its cluster is terminated";
  return undefined;
}
