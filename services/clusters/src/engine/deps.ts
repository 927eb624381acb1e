import type { NatsConnection } from "@nats-io/transport-node";
import { ensureLiveEventRepublish, ensureStreams, type Logger, type MetricsRegistry } from "@corral/shared";
import { openClusterBuckets } from "../adapters/buckets.js";
import { openClusterStore, type ClusterStore } from "../adapters/cluster-store.js";
import { createCounters, type Counters } from "../adapters/counters.js";
import { createCredentialStore, type CredentialStore } from "../adapters/credentials-store.js";
import { createNodeStore, type NodeStore } from "../adapters/node-store.js";
import { createPlanStore, type PlanStore } from "../adapters/plan-store.js";
import { createPublisher, type Publisher } from "../adapters/publisher.js";
import { openTenancyClient, type TenancyClient } from "../adapters/tenancy-client.js";
import { openUsageStore, type UsageStore } from "../adapters/usage-store.js";
import { createEngineMetrics, type EngineMetrics } from "./metrics.js";

/** Everything the engine touches; tests can swap any of it. */
export interface EngineDeps {
  nc: NatsConnection;
  log: Logger;
  now: () => number;
  clusters: ClusterStore;
  nodes: NodeStore;
  plans: PlanStore;
  counters: Counters;
  credentials: CredentialStore;
  usage: UsageStore;
  tenancy: TenancyClient;
  publisher: Publisher;
  metrics: EngineMetrics;
}

export interface EngineDepsOptions {
  log: Logger;
  /** @default Date.now */
  now?: () => number;
  /** What tenancy answers. @default the tenancy client on `nc` */
  tenancy?: TenancyClient;
  /** Where plans and tasks are counted for Prometheus (engine/metrics.ts). @default not counted */
  metrics?: MetricsRegistry;
}

/**
 * Opens the stores and clients on `nc`, creating the streams and buckets when absent. `deps.clusters.stop()`
 * ends the cluster store's watch.
 */
export async function openEngineDeps(nc: NatsConnection, options: EngineDepsOptions): Promise<EngineDeps> {
  await ensureStreams(nc);
  await ensureLiveEventRepublish(nc);
  const buckets = await openClusterBuckets(nc);
  return {
    nc,
    log: options.log,
    now: options.now ?? Date.now,
    clusters: await openClusterStore(buckets.clusters, options.log),
    nodes: createNodeStore(buckets.nodes),
    plans: createPlanStore(buckets.plans, buckets.planTasks),
    counters: createCounters(buckets.counters),
    credentials: createCredentialStore(buckets.credentials),
    usage: await openUsageStore(nc),
    tenancy: options.tenancy ?? (await openTenancyClient(nc)),
    publisher: createPublisher(nc),
    metrics: createEngineMetrics(options.metrics),
  };
}
