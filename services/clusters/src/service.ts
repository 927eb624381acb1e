import type { NatsConnection } from "@nats-io/transport-node";
import { ensureStreams, queues, serve, type Logger } from "@corral/shared";
import { openClusterBuckets } from "./adapters/buckets.js";
import { openClusterStore } from "./adapters/cluster-store.js";
import { createCounters } from "./adapters/counters.js";
import { createCredentialStore } from "./adapters/credentials-store.js";
import { createNodeStore } from "./adapters/node-store.js";
import { createPlanStore } from "./adapters/plan-store.js";
import { createPublisher } from "./adapters/publisher.js";
import { openTenancyClient } from "./adapters/tenancy-client.js";
import { createTenantMessages } from "./adapters/tenant-messages.js";
import { openUsageStore } from "./adapters/usage-store.js";
import { createActors, type ActorsOptions } from "./actor/index.js";
import type { EngineDeps } from "./engine/deps.js";
import { createReconciler } from "./engine/reconciler.js";
import { startResultsConsumer } from "./engine/results-consumer.js";
import { clusterHandlers } from "./handlers/clusters.js";
import { configHandlers } from "./handlers/config.js";
import { planHandlers } from "./handlers/plans.js";
import { rpcHandlers } from "./handlers/rpc.js";
import { serviceHandlers } from "./handlers/services.js";
import { tenantPurgeHandlers } from "./handlers/tenant-purge.js";
import { createClusterOperations } from "./operations/index.js";

export interface ClustersServiceDeps {
  nc: NatsConnection;
  log: Logger;
  /** @default Date.now */
  now?: () => number;
  /** How often stored state is reconciled (republish, finish, expiry). @default 5000 */
  reconcileIntervalMs?: number;
  /** Unconfirmed dispatches older than this are republished. @default 10000 */
  republishAfterMs?: number;
  /** Observes the actors' writes (see actor/index.ts). */
  actors?: ActorsOptions;
}

export interface ClustersService {
  stop(): Promise<void>;
}

/** Starts the clusters service: cluster and plan actors, task dispatch, results, reconciliation. */
export async function startClustersService(options: ClustersServiceDeps): Promise<ClustersService> {
  const { nc, log } = options;
  await ensureStreams(nc);
  const buckets = await openClusterBuckets(nc);
  const clusters = await openClusterStore(buckets.clusters, log);
  const deps: EngineDeps = {
    nc,
    log,
    now: options.now ?? Date.now,
    clusters,
    nodes: createNodeStore(buckets.nodes),
    plans: createPlanStore(buckets.plans, buckets.planTasks),
    counters: createCounters(buckets.counters),
    credentials: createCredentialStore(buckets.credentials),
    usage: await openUsageStore(nc),
    tenancy: await openTenancyClient(nc),
    publisher: createPublisher(nc),
  };
  const ctx = { deps, actors: createActors(deps, options.actors) };
  const h = { deps, operations: createClusterOperations(ctx) };
  const served = serve({
    nc,
    queue: queues.clusters,
    log,
    handlers: {
      ...clusterHandlers(h),
      ...planHandlers(h),
      ...configHandlers(h),
      ...serviceHandlers(h),
      ...rpcHandlers(h),
      ...tenantPurgeHandlers(h, createTenantMessages(nc)),
    },
  });
  const results = await startResultsConsumer(deps, ctx.actors.effects);
  const reconciler = createReconciler(ctx, { republishAfterMs: options.republishAfterMs });
  let reconciling: Promise<void> | undefined;
  const timer = setInterval(() => {
    reconciling ??= reconciler
      .run()
      .catch((err: unknown) => log.warn("reconcile run failed", { err }))
      .finally(() => (reconciling = undefined));
  }, options.reconcileIntervalMs ?? 5000);
  timer.unref();

  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        clearInterval(timer);
        await served.stop();
        await results.stop();
        await reconciling;
        clusters.stop();
      })();
      return stopping;
    },
  };
}
