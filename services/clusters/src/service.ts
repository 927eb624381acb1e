import type { NatsConnection } from "@nats-io/transport-node";
import { serveEndpoints, type Logger, type MetricsRegistry } from "@corral/shared";
import { createActors, type ActorsOptions } from "./actor/index.js";
import { openEngineDeps } from "./adapters/deps.js";
import { registerClusterGauge } from "./adapters/metrics.js";
import { createReconciler } from "./engine/reconciler.js";
import { createAutoRepair } from "./engine/repair/auto-repair.js";
import { startHealthReports } from "./engine/health/reports.js";
import { startResultsConsumer } from "./engine/results/consumer.js";
import { clusterHandlers } from "./handlers/clusters.js";
import { configHandlers } from "./handlers/config.js";
import { planHandlers } from "./handlers/plans.js";
import { rpcHandlers } from "./handlers/rpc.js";
import { nodeHandlers } from "./handlers/nodes.js";
import { serviceHandlers } from "./handlers/services.js";
import { tenantPurgeHandlers } from "./handlers/tenant-purge.js";
import { createClusterOperations } from "./operations/index.js";
import { createClusterQueries } from "./queries/index.js";

export interface ClustersServiceDeps {
  nc: NatsConnection;
  log: Logger;
  /** @default Date.now */
  now?: () => number;
  /** How often stored state is reconciled (republish, finish, expiry) and nodes are repaired. @default 5000 */
  reconcileIntervalMs?: number;
  /** Unconfirmed dispatches older than this are republished. @default 10000 */
  republishAfterMs?: number;
  /** Observes the actors' writes (see actor/index.ts). */
  actors?: ActorsOptions;
  /** The process's Prometheus metrics: request durations, clusters by status, plans and tasks. @default none */
  metrics?: MetricsRegistry;
}

export interface ClustersService {
  stop(): Promise<void>;
}

/**
 * Starts the clusters service: cluster and plan actors, task dispatch, results, reconciliation. The one place the
 * layers meet: handlers call operations and queries, operations call actors, the engine (results consumer,
 * reconciler) is handed the actors here, and every layer reaches NATS through the adapters.
 */
export async function startClustersService(options: ClustersServiceDeps): Promise<ClustersService> {
  const { nc, log } = options;
  const deps = await openEngineDeps(nc, { log, metrics: options.metrics, ...(options.now ? { now: options.now } : {}) });
  if (options.metrics) registerClusterGauge(options.metrics, deps.clusters);
  const ctx = { deps, actors: createActors(deps, options.actors) };
  const h = { operations: createClusterOperations(ctx), queries: createClusterQueries(deps) };
  const served = serveEndpoints({
    nc,
    service: "clusters",
    log,
    metrics: options.metrics,
    handlers: {
      ...clusterHandlers(h),
      ...planHandlers(h),
      ...configHandlers(h),
      ...serviceHandlers(h),
      ...nodeHandlers(h),
      ...rpcHandlers(h),
      ...tenantPurgeHandlers(h),
    },
  });
  const results = await startResultsConsumer(deps, ctx.actors.effects);
  const health = startHealthReports(deps);
  const reconciler = createReconciler(ctx, { republishAfterMs: options.republishAfterMs });
  const repairs = createAutoRepair(deps, h.operations);
  let reconciling: Promise<void> | undefined;
  const timer = setInterval(() => {
    reconciling ??= reconciler
      .run()
      .then(() => repairs.run())
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
        await health.stop();
        await reconciling;
        await ctx.actors.effects.flushPublishedMarks();
        deps.clusters.stop();
      })();
      return stopping;
    },
  };
}
