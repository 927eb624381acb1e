import type { NatsConnection } from "@nats-io/transport-node";
import { openAuditLog, openRedis, redisReady, REDIS_START_WAIT_MS, serveEndpoints, type Logger, type MetricsRegistry } from "@corral/shared";
import { auditReader } from "./adapters/audit-reader.js";
import { startEventFeed } from "./adapters/event-feed.js";
import { failedTaskLookup } from "./adapters/failed-task-lookup.js";
import { startPlanEndFeed, type PlanEndFeed } from "./adapters/plan-end-feed.js";
import { openQueueStateReader } from "./adapters/queue-state.js";
import { createRedisUsageStore, type RedisClient } from "./adapters/usage-store.js";
import { auditHandlers } from "./handlers/audit.js";
import { nodeUsageHandlers } from "./handlers/node-usage.js";
import { registerQueueDepthGauge } from "./handlers/queue-depth-gauge.js";
import { queueHandlers } from "./handlers/queues.js";
import { tenantPurgeHandlers } from "./handlers/tenant-purge.js";

export interface MetricsServiceDeps {
  nc: NatsConnection;
  /** A Redis URL (the service opens and closes its own client) or a connected client the caller keeps. */
  redis: string | RedisClient;
  log: Logger;
  /** Clock in ms; "now" of node usage (open nodes count until now; `end` defaults to now). @default Date.now */
  now?: () => number;
  /** Prefix of every Redis key the service writes. @default "corral:metrics:" */
  keyPrefix?: string;
  /** Node events recorded per Redis call and acked together. @default 512 */
  eventBatchSize?: number;
  /** How often the service checks whether Redis lost its data (then the events stream is replayed), ms. @default 10000 */
  emptyCheckMs?: number;
  /** The process's Prometheus metrics: request durations and every tenant's queue depth. @default none */
  metrics?: MetricsRegistry;
  /** Plans' ends are recorded in the audit log (`audit.enabled`). @default true */
  audit?: boolean;
}

export interface MetricsService {
  /** Stops serving and feeding; closes the Redis client when the service opened it. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts the metrics service: queue metrics from the task consumers' state, node usage from node lifetimes kept
 * in Redis and fed by a durable consumer of the node events (services/metrics/README.md); the audit log read back
 * (`GET /audit`), and the end of every plan recorded in it by a durable consumer of plans' ends.
 */
export async function startMetricsService(deps: MetricsServiceDeps): Promise<MetricsService> {
  const { nc, log } = deps;
  const now = deps.now ?? Date.now;
  const keyPrefix = deps.keyPrefix ?? "corral:metrics:";
  let client: RedisClient;
  let ownsClient = false;
  if (typeof deps.redis === "string") {
    client = openRedis({ url: deps.redis, log, name: "corral-metrics" });
    ownsClient = true;
    // Starts without Redis too (usage answers 503 until it is back); waits a little so a normal start finds it.
    if (!(await redisReady(client, REDIS_START_WAIT_MS))) log.warn("starting without Redis: node usage is unavailable until it is back");
  } else {
    client = deps.redis;
  }
  try {
    const store = createRedisUsageStore(client, { keyPrefix });
    // An empty Redis (new, or lost) is refilled from the events stream's history; the marker says it is not empty.
    const claimEmpty = async () => (await client.set(`${keyPrefix}meta:since`, String(now()), { condition: "NX" })) === "OK";
    const feed = await startEventFeed({
      nc,
      store,
      log: log.child({ part: "event-feed" }),
      batchSize: deps.eventBatchSize,
      claimEmpty,
      emptyCheckMs: deps.emptyCheckMs,
    });
    let planEnds: { feed: PlanEndFeed; stopLog(): Promise<void> } | undefined;
    if (deps.audit !== false) {
      const auditLog = openAuditLog({ nc, log: log.child({ part: "audit" }), metrics: deps.metrics });
      const feed = await startPlanEndFeed({ nc, auditLog, failedTaskAt: failedTaskLookup(nc), log: log.child({ part: "plan-ends" }) });
      planEnds = { feed, stopLog: () => auditLog.stop() };
    }
    const reader = await openQueueStateReader(nc);
    if (deps.metrics) registerQueueDepthGauge(deps.metrics, reader);
    const served = serveEndpoints({
      nc,
      service: "metrics",
      log,
      metrics: deps.metrics,
      handlers: { ...queueHandlers(reader), ...nodeUsageHandlers(store, now, log), ...tenantPurgeHandlers(store, feed, log), ...auditHandlers(auditReader(nc)) },
    });
    // The subscriptions are registered at the server once start resolves: a request right after finds them.
    await nc.flush();

    let stopping: Promise<void> | undefined;
    return {
      stop() {
        stopping ??= (async () => {
          await served.stop();
          await feed.stop();
          await planEnds?.feed.stop();
          await planEnds?.stopLog();
          if (ownsClient) await client.close().catch(() => {});
        })();
        return stopping;
      },
    };
  } catch (err) {
    if (ownsClient) await client.close().catch(() => {});
    throw err;
  }
}

export type { RedisClient } from "./adapters/usage-store.js";
