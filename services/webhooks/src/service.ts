import type { NatsConnection } from "@nats-io/transport-node";
import { serveEndpoints, type Logger, type MetricsRegistry } from "@corral/shared";
import { openDeliveryStore } from "./adapters/delivery-store.js";
import { ensureIntakeConsumers, runIntake } from "./adapters/event-intake.js";
import { httpSender, type Resolver } from "./adapters/http-sender.js";
import { startLeadership } from "./adapters/leadership.js";
import { openWebhookStore } from "./adapters/webhook-store.js";
import { addressPolicy } from "./domain/address-policy.js";
import type { DeliveryRecord } from "./domain/delivery-record.js";
import { startDeliveryQueue } from "./domain/delivery-queue.js";
import { deliveryIdOf, laneOf, payloadOf, type WebhookEvent } from "./domain/events.js";
import { DEFAULT_RETRY_DELAYS_MS } from "./domain/retry-schedule.js";
import { webhookHandlers } from "./handlers/webhooks.js";

export interface WebhooksServiceDeps {
  nc: NatsConnection;
  log: Logger;
  metrics?: MetricsRegistry;
  /** Networks deliveries may reach although private, loopback or link-local (`webhooks.allowedNetworks`). @default none */
  allowedNetworks?: readonly string[];
  /** Delays between attempts of a delivery. @default DEFAULT_RETRY_DELAYS_MS (2 s growing to 1 h, about 2 h in all) */
  retryDelaysMs?: readonly number[];
  /** How long one attempt may take, ms. @default 10000 */
  attemptTimeoutMs?: number;
  /** How long the delivery lease lasts unless renewed, ms. @default 15000 */
  leaseMs?: number;
  /** Lanes of one endpoint attempted at once. @default 4 */
  perEndpoint?: number;
  /** Resolves host names at delivery. @default dns.lookup */
  resolve?: Resolver;
}

export interface WebhooksService {
  /** Stops serving and delivering (the attempts under way end first). Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts the webhooks service (docs/webhooks.md): every instance answers the webhook endpoints; the one holding the
 * delivery lease reads the cluster events and audit entries through durable consumers, stores a delivery per
 * endpoint told of each, and delivers them.
 */
export async function startWebhooksService(deps: WebhooksServiceDeps): Promise<WebhooksService> {
  const { nc, log } = deps;
  const policy = addressPolicy(deps.allowedNetworks ?? []);
  const sender = httpSender({ policy, timeoutMs: deps.attemptTimeoutMs ?? 10_000, ...(deps.resolve ? { resolve: deps.resolve } : {}) });
  const webhooks = await openWebhookStore(nc);
  const deliveries = await openDeliveryStore(nc);
  await ensureIntakeConsumers(nc);

  const lead = async (signal: AbortSignal) => {
    const queue = startDeliveryQueue(
      {
        webhook: (tenant, id) => webhooks.get(tenant, id),
        disable: async (tenant, id, disabled) => {
          await webhooks.update(tenant, id, (current) => ({ ...current, enabled: false, disabled, updatedAt: disabled.at }));
        },
        save: (record) => deliveries.save(record),
        dropWebhook: (tenant, id) => deliveries.dropWebhook(tenant, id),
        post: (url, headers, body) => sender.post(url, headers, body),
        log,
      },
      { retryDelaysMs: deps.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS, ...(deps.perEndpoint ? { perEndpoint: deps.perEndpoint } : {}) },
    );
    try {
      for (const record of await deliveries.pending()) queue.add(record);
      const handle = async (event: WebhookEvent) => {
        const subscribers = (await webhooks.cached(event.tenant)).filter(
          (w) => w.enabled && (w.events as readonly string[]).includes(event.type) && event.at >= Date.parse(w.createdAt),
        );
        for (const webhook of subscribers) {
          const record: DeliveryRecord = {
            id: deliveryIdOf(webhook.id, event.source),
            type: event.type,
            clusterId: event.clusterId,
            status: "pending",
            attempts: 0,
            createdAt: new Date().toISOString(),
            tenant: event.tenant,
            webhookId: webhook.id,
            lane: laneOf(event),
            seq: event.source.seq,
            index: event.source.index,
            body: payloadOf(event),
          };
          if (await deliveries.add(record)) queue.add(record);
        }
      };
      await runIntake({ nc, log, handle, signal });
    } finally {
      await queue.stop();
    }
  };
  const leadership = await startLeadership({ nc, log, lead, ...(deps.leaseMs !== undefined ? { leaseMs: deps.leaseMs } : {}) });
  const served = serveEndpoints({
    nc,
    service: "webhooks",
    log,
    metrics: deps.metrics,
    handlers: webhookHandlers({ webhooks, deliveries, policy, sender }),
  });
  await nc.flush();

  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        await served.stop();
        await leadership.stop();
      })();
      return stopping;
    },
  };
}

export type { Resolver } from "./adapters/http-sender.js";
