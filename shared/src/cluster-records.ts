import type { NatsConnection } from "@nats-io/transport-node";
import { buckets, kvKey, type ClusterRecordHead } from "@corral/contracts";
import { openBucket, readValue } from "./kv.js";

/** Reads the head of a cluster record (`ClusterRecordHead`: tenant and status), what provisioners may read of it. */
export interface ClusterRecordReader {
  get(clusterId: string): Promise<ClusterRecordHead | undefined>;
}

export async function openClusterRecordReader(nc: NatsConnection): Promise<ClusterRecordReader> {
  const kv = await openBucket(nc, buckets.clusters);
  return {
    async get(clusterId) {
      const record = (await readValue<ClusterRecordHead>(kv, kvKey(clusterId)))?.value;
      if (!record) return undefined;
      return { tenant: record.tenant, ...(record.status !== undefined ? { status: record.status } : {}) };
    },
  };
}
