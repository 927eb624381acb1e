import type { NatsConnection } from "@nats-io/transport-node";
import { ensureLiveEventRepublish, ensureStreams, type Logger, type MetricsRegistry } from "@corral/shared";
import { openClusterBuckets } from "./buckets.js";
import { openClusterStore, type ClusterReader, type ClusterStore } from "./cluster-store.js";
import { createCounters, type Counters } from "./counters.js";
import { createCredentialStore, type CredentialStore } from "./credentials-store.js";
import { createEngineMetrics, type EngineMetrics } from "./metrics.js";
import { createNodeStore, type NodeStore } from "./node-store.js";
import { createPlanStore, type PlanReader, type PlanStore } from "./plan-store.js";
import { createPublisher, type Publisher } from "./publisher.js";
import { solverService, type Solver } from "./solver.js";
import { openTenancyClient, type TenancyClient } from "./tenancy-client.js";
import { createTenantMessages, type TenantMessages } from "./tenant-messages.js";
import { openUsageStore, type UsageStore } from "./usage-store.js";

/** Every store and client of the service; tests can swap any of it. */
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
  /** What a tenant leaves in the streams and in `corral_cluster_keys` (purged with the tenant). */
  tenantMessages: TenantMessages;
  publisher: Publisher;
  metrics: EngineMetrics;
  /** The solver service every operation and dry run lays out and plans with. */
  solver: Solver;
}

/**
 * The deps as every layer but the actors sees them: cluster and plan records are read there, never written
 * (src/actor/ is the one place that writes them).
 */
export type ReadingDeps = Omit<EngineDeps, "clusters" | "plans"> & { clusters: ClusterReader; plans: PlanReader };

export interface EngineDepsOptions {
  log: Logger;
  /** @default Date.now */
  now?: () => number;
  /** What tenancy answers. @default the tenancy client on `nc` */
  tenancy?: TenancyClient;
  /** Where plans and tasks are counted for Prometheus (adapters/metrics.ts). @default not counted */
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
    tenantMessages: createTenantMessages(nc),
    publisher: createPublisher(nc),
    metrics: createEngineMetrics(options.metrics),
    solver: solverService(nc),
  };
}
