import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import {
  buckets,
  kvKey,
  streams,
  taskConsumerName,
  tenantStreamFilters,
} from "@corral/contracts";
import {
  openBucket,
  purgeKeys,
  retryingOnce,
  type KV,
} from "@corral/shared";

/**
 * What a tenant leaves outside the cluster, node and plan stores: its task queue and the consumer its workers
 * pulled from, its results and events (the event feeds replay from any stream sequence), and the SSH keys
 * providers generated for its clusters (`corral_cluster_keys`, `<tenant>.<clusterId>`, written by provisioners
 * and removed with a cluster's last machine, so only what a failed delete left is still there).
 */
export interface TenantMessages {
  /** Removes all of it; idempotent. */
  purge(tenant: string): Promise<void>;
}

const isNotFound = (err: unknown) => /not found/i.test((err as Error | undefined)?.message ?? "");

export function createTenantMessages(nc: NatsConnection): TenantMessages {
  const clusterKeys = retryingOnce((): Promise<KV> => openBucket(nc, buckets.clusterKeys));
  return {
    async purge(tenant) {
      const jsm = await jetstreamManager(nc);
      await jsm.consumers.delete(streams.tasks, taskConsumerName(tenant)).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
      for (const [stream, filter] of Object.entries(tenantStreamFilters(tenant))) await jsm.streams.purge(stream, { filter });
      await purgeKeys(await clusterKeys(), `${kvKey(tenant)}.>`);
    },
  };
}
