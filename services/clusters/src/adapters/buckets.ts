import type { NatsConnection } from "@nats-io/transport-node";
import { buckets } from "@corral/contracts";
import { openBucket, type KV } from "@corral/shared";

/** The buckets only the clusters service writes. */
export interface ClusterBuckets {
  clusters: KV;
  nodes: KV;
  plans: KV;
  planTasks: KV;
  counters: KV;
  credentials: KV;
}

export async function openClusterBuckets(nc: NatsConnection): Promise<ClusterBuckets> {
  const [clusters, nodes, plans, planTasks, counters, credentials] = await Promise.all([
    openBucket(nc, buckets.clusters),
    openBucket(nc, buckets.nodes),
    openBucket(nc, buckets.plans),
    openBucket(nc, buckets.planTasks),
    openBucket(nc, buckets.counters),
    openBucket(nc, buckets.credentials),
  ]);
  return { clusters, nodes, plans, planTasks, counters, credentials };
}
