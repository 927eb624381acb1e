import type { NatsConnection } from "@nats-io/transport-node";
import { decode, kvKey } from "@corral/contracts";
import { listKeys, readValue, type KV } from "@corral/shared";
import { openClusterBuckets } from "./adapters/buckets.js";
import { createNodeStore } from "./adapters/node-store.js";
import { createPlanStore } from "./adapters/plan-store.js";
import { jobCounterName } from "./adapters/counters.js";
import { formatTaskId, clusterNodeIds } from "./domain/ids.js";
import { type ClusterNode, type ClusterRecord, type PlanRecord, type StoredTask } from "./domain/records.js";

/** A planned task with its id. */
export interface PlannedTask extends StoredTask {
  taskId: string;
  stage: number;
}

/** Keys the service keeps for some clusters, per bucket (all 0 once they are purged). */
export interface KeysKept {
  nodes: number;
  plans: number;
  planTasks: number;
  jobCounters: number;
  credentials: number;
}

/**
 * What the clusters service stored, read straight from its buckets in their key layout: for tests and benchmarks
 * that assert from (or watch) stored state. Services read through `@corral/clusters/readers` instead.
 */
export interface StoredClusterState {
  /** The raw buckets, for tests that write state directly and benchmarks that watch it. */
  kv: { clusters: KV; nodes: KV; plans: KV; planTasks: KV };
  cluster(id: string): Promise<{ value: ClusterRecord; revision: number } | undefined>;
  plan(clusterId: string, planId: string): Promise<{ value: PlanRecord; revision: number } | undefined>;
  /** Every task of a plan, in order, with ids. */
  planTasks(plan: PlanRecord): Promise<PlannedTask[]>;
  nodes(cluster: ClusterRecord): Promise<ClusterNode[]>;
  /** Earlier stored versions of a cluster record, oldest first (the bucket keeps a few). */
  clusterHistory(id: string): Promise<Array<{ value: ClusterRecord; revision: number }>>;
  keysKept(clusterIds: readonly string[]): Promise<KeysKept>;
}

export async function openStoredClusterState(nc: NatsConnection): Promise<StoredClusterState> {
  const { clusters, nodes, plans, planTasks, counters, credentials } = await openClusterBuckets(nc);
  const planStore = createPlanStore(plans, planTasks);
  const nodeStore = createNodeStore(nodes);
  const perCluster = async (kv: KV, clusterIds: readonly string[], filterOf: (id: string) => string) => {
    let n = 0;
    for (const id of clusterIds) n += (await listKeys(kv, filterOf(id))).length;
    return n;
  };
  const below = (id: string) => `${kvKey(id)}.>`;
  return {
    kv: { clusters, nodes, plans, planTasks },
    cluster: (id) => readValue<ClusterRecord>(clusters, kvKey(id)),
    plan: (clusterId, planId) => readValue<PlanRecord>(plans, kvKey(clusterId, planId)),
    async planTasks(plan) {
      const out: PlannedTask[] = [];
      for (let stage = 0; stage < plan.stageSizes.length; stage++) {
        for (const t of await planStore.stageTasks(plan, stage)) out.push({ ...t, stage, taskId: formatTaskId(plan.id, out.length) });
      }
      return out;
    },
    nodes: (cluster) => nodeStore.getMany(cluster.id, clusterNodeIds(cluster)),
    async clusterHistory(id) {
      const out: Array<{ value: ClusterRecord; revision: number }> = [];
      for await (const e of await clusters.history({ key: kvKey(id) })) {
        if (e.operation === "PUT") out.push({ value: decode<ClusterRecord>(e.value), revision: e.revision });
      }
      return out.sort((a, b) => a.revision - b.revision);
    },
    async keysKept(clusterIds) {
      return {
        nodes: await perCluster(nodes, clusterIds, below),
        plans: await perCluster(plans, clusterIds, below),
        planTasks: await perCluster(planTasks, clusterIds, below),
        jobCounters: await perCluster(counters, clusterIds, jobCounterName),
        // Provider fields are kept per plan; records of older versions under the cluster's key alone.
        credentials: (await perCluster(credentials, clusterIds, kvKey)) + (await perCluster(credentials, clusterIds, below)),
      };
    },
  };
}
