import type { NatsConnection } from "@nats-io/transport-node";
import { ClusterStatus, kvKey, buckets } from "@corral/contracts";
import { openBucket, readValue } from "./kv.js";

/**
 * What provisioners may read of a cluster record (the clusters service alone writes them, key `kvKey(clusterId)`):
 * whose cluster it is and its status, the state of its actor. Cluster ids are never reused, so a missing record
 * is a cluster that is gone for good (its tenant was deleted and purged).
 */
export interface ClusterRecordHead {
  tenant: string;
  actor?: { value?: unknown };
}

export interface ClusterRecordReader {
  get(clusterId: string): Promise<ClusterRecordHead | undefined>;
}

export async function openClusterRecordReader(nc: NatsConnection): Promise<ClusterRecordReader> {
  const kv = await openBucket(nc, buckets.clusters);
  return { get: async (clusterId) => (await readValue<ClusterRecordHead>(kv, kvKey(clusterId)))?.value };
}

export const isTerminatedCluster = (record: ClusterRecordHead): boolean => record.actor?.value === ClusterStatus.Terminated;
