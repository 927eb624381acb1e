import type { NatsConnection } from "@nats-io/transport-node";
import { openBucket, type KV } from "@corral/shared";

/** Buckets only the clusters service writes. */
export const clusterBuckets = {
  clusters: "corral_clusters",
  nodes: "corral_nodes",
  plans: "corral_plans",
  planTasks: "corral_plan_tasks",
  counters: "corral_counters",
  credentials: "corral_credentials",
} as const;

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
    openBucket(nc, clusterBuckets.clusters, { history: 5 }),
    openBucket(nc, clusterBuckets.nodes),
    openBucket(nc, clusterBuckets.plans),
    openBucket(nc, clusterBuckets.planTasks),
    openBucket(nc, clusterBuckets.counters),
    openBucket(nc, clusterBuckets.credentials),
  ]);
  return { clusters, nodes, plans, planTasks, counters, credentials };
}

/** Runs `fn` over items with at most `limit` in flight, keeping order of results. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
