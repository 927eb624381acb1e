/**
 * Everything stored under a tenant's name, read straight from KV, the streams and Redis: what tenant deletion
 * must leave empty (and what a tenant with a cluster behind it fills, to show a check is not vacuous).
 */
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { createClient } from "redis";
import {
  buckets,
  keyToken,
  kvKey,
  streams,
  taskConsumerName,
  tenantStreamFilters,
  type StreamName,
} from "@corral/contracts";
import { listKeys, openBucket, readValue } from "@corral/shared";
import { openStoredClusterState } from "@corral/clusters/testing";

/** Counts of what is stored for a tenant (0 or false: nothing). */
export interface TenantLeftovers {
  tenantRecord: boolean;
  /** Ids of cluster records naming the tenant. */
  clusters: string[];
  /** Keys kept for the given cluster ids, per bucket. */
  nodes: number;
  plans: number;
  planTasks: number;
  jobCounters: number;
  credentials: number;
  clusterKeys: number;
  hostPool: number;
  usage: boolean;
  catalog: number;
  pluginResources: number;
  /** Webhook endpoints and their deliveries. */
  webhooks: number;
  webhookDeliveries: number;
  taskConsumer: boolean;
  /** Messages per stream under the tenant's subjects. */
  tasks: number;
  results: number;
  events: number;
  /** Node-usage keys in Redis (node records, tenant and tenant-user series); -1 without a Redis URL. */
  redisKeys: number;
}

/** The leftovers a fully purged tenant has. */
export const NO_LEFTOVERS: TenantLeftovers = {
  tenantRecord: false,
  clusters: [],
  nodes: 0,
  plans: 0,
  planTasks: 0,
  jobCounters: 0,
  credentials: 0,
  clusterKeys: 0,
  hostPool: 0,
  usage: false,
  catalog: 0,
  pluginResources: 0,
  webhooks: 0,
  webhookDeliveries: 0,
  taskConsumer: false,
  tasks: 0,
  results: 0,
  events: 0,
  redisKeys: 0,
};

const under = async (nc: NatsConnection, bucket: string, filter: string) => (await listKeys(await openBucket(nc, bucket), filter)).length;

export async function tenantLeftovers(
  nc: NatsConnection,
  tenant: string,
  clusterIds: readonly string[],
  redisUrl?: string,
): Promise<TenantLeftovers> {
  const jsm = await jetstreamManager(nc);
  const clustersKv = await openBucket(nc, buckets.clusters);
  const clusters: string[] = [];
  for (const key of await listKeys(clustersKv)) {
    const record = await readValue<{ id: string; tenant: string }>(clustersKv, key);
    if (record?.value.tenant === tenant) clusters.push(record.value.id);
  }
  const messages = async (stream: StreamName) => {
    const filter = tenantStreamFilters(tenant)[stream];
    const info = await jsm.streams.info(stream, { subjects_filter: filter });
    return Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
  };
  const tenantKeys = `${kvKey(tenant)}.>`;
  return {
    tenantRecord: (await readValue(await openBucket(nc, buckets.tenants), kvKey(tenant))) !== undefined,
    clusters,
    ...(await (await openStoredClusterState(nc)).keysKept(clusterIds)),
    clusterKeys: await under(nc, buckets.clusterKeys, tenantKeys),
    hostPool: await under(nc, buckets.hostPool, tenantKeys),
    usage: (await readValue(await openBucket(nc, buckets.usage), kvKey(tenant))) !== undefined,
    catalog: await under(nc, buckets.catalog, tenantKeys),
    pluginResources: await under(nc, buckets.pluginResources, tenantKeys),
    webhooks: await under(nc, buckets.webhooks, tenantKeys),
    webhookDeliveries: await under(nc, buckets.webhookDeliveries, tenantKeys),
    taskConsumer: await jsm.consumers.info(streams.tasks, taskConsumerName(tenant)).then(
      () => true,
      () => false,
    ),
    tasks: await messages(streams.tasks),
    results: await messages(streams.results),
    events: await messages(streams.events),
    redisKeys: redisUrl === undefined ? -1 : await redisKeysOf(redisUrl, tenant),
  };
}

/** The metrics service's Redis keys of a tenant (services/metrics/src/adapters/usage-scripts.ts layout). */
async function redisKeysOf(url: string, tenant: string): Promise<number> {
  const client = createClient({ url });
  await client.connect();
  try {
    const t = keyToken(tenant);
    let n = 0;
    for (const pattern of [`corral:metrics:n:${t}:*`, `corral:metrics:s:t:${t}:*`, `corral:metrics:s:tu:${t}:*`]) {
      for await (const keys of client.scanIterator({ MATCH: pattern, COUNT: 1000 })) n += keys.length;
    }
    return n;
  } finally {
    await client.close();
  }
}
