import type { WebhookDisabled, WebhookRecord } from "@corral/contracts";
import type { Logger } from "@corral/shared";
import type { AttemptOutcome } from "../adapters/http-sender.js";
import { bySource, type DeliveryRecord } from "./delivery-record.js";
import { retryDelayAfter } from "./retry-schedule.js";
import { signedHeaders } from "./signature.js";

export interface DeliveryQueuePorts {
  /** The endpoint as stored now (undefined: deleted). */
  webhook(tenant: string, id: string): Promise<WebhookRecord | undefined>;
  /** Disables an endpoint whose delivery failed past its retries. */
  disable(tenant: string, id: string, disabled: WebhookDisabled): Promise<void>;
  /** Stores a delivery's new state. */
  save(record: DeliveryRecord): Promise<void>;
  /** Forgets every delivery of a deleted endpoint. */
  dropWebhook(tenant: string, id: string): Promise<void>;
  post(url: string, headers: Record<string, string>, body: string): Promise<AttemptOutcome>;
  log: Logger;
  now?: () => number;
}

export interface DeliveryQueueOptions {
  /** Delays between attempts (retry-schedule.ts). */
  retryDelaysMs: readonly number[];
  /** Lanes of one endpoint attempted at once. @default 4 */
  perEndpoint?: number;
  /** How often the lanes of a disabled endpoint look whether it is enabled again, ms. @default 5000 */
  disabledPollMs?: number;
}

export interface DeliveryQueue {
  /** Queues a pending delivery at the end of its lane. */
  add(record: DeliveryRecord): void;
  /** Attempts nothing more; waits for the attempts under way. */
  stop(): Promise<void>;
}

/** One endpoint's deliveries: a lane per cluster (and one for audit entries), each delivered in order. */
interface EndpointQueue {
  tenant: string;
  webhookId: string;
  lanes: Map<string, DeliveryRecord[]>;
  busy: Set<string>;
  /** While disabled: when to look again (ms). */
  pausedUntil: number;
}

const dueAt = (record: DeliveryRecord): number => (record.nextAttemptAt === undefined ? 0 : Date.parse(record.nextAttemptAt));

/**
 * Delivers queued deliveries: in each lane the first is attempted, and the next only once it succeeded or failed for
 * good; lanes of one endpoint go on side by side up to `perEndpoint`, and endpoints never wait for one another. A
 * failed attempt is tried again after the next delay of the schedule; past the last, the delivery has failed and
 * its endpoint is disabled, with the reason.
 */
export function startDeliveryQueue(ports: DeliveryQueuePorts, options: DeliveryQueueOptions): DeliveryQueue {
  const now = ports.now ?? Date.now;
  const perEndpoint = options.perEndpoint ?? 4;
  const disabledPollMs = options.disabledPollMs ?? 5000;
  const endpoints = new Map<string, EndpointQueue>();
  const flights = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const endpointOf = (record: DeliveryRecord): EndpointQueue => {
    const key = `${record.tenant}\u0000${record.webhookId}`;
    let queue = endpoints.get(key);
    if (!queue) endpoints.set(key, (queue = { tenant: record.tenant, webhookId: record.webhookId, lanes: new Map(), busy: new Set(), pausedUntil: 0 }));
    return queue;
  };

  const pump = () => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = undefined;
    const at = now();
    let nextDue = Number.POSITIVE_INFINITY;
    for (const [key, queue] of endpoints) {
      if (queue.lanes.size === 0 && queue.busy.size === 0) {
        endpoints.delete(key);
        continue;
      }
      if (queue.pausedUntil > at) {
        nextDue = Math.min(nextDue, queue.pausedUntil);
        continue;
      }
      for (const [lane, records] of queue.lanes) {
        if (queue.busy.size >= perEndpoint) break;
        if (queue.busy.has(lane)) continue;
        const head = records[0]!;
        const due = dueAt(head);
        if (due > at) {
          nextDue = Math.min(nextDue, due);
          continue;
        }
        queue.busy.add(lane);
        const flight = attempt(queue, lane, head).finally(() => {
          queue.busy.delete(lane);
          flights.delete(flight);
          pump();
        });
        flights.add(flight);
      }
    }
    if (nextDue !== Number.POSITIVE_INFINITY) timer = setTimeout(pump, Math.max(0, nextDue - now()));
  };

  /** Takes the head of a lane off it (it succeeded or failed for good). */
  const settle = (queue: EndpointQueue, lane: string, record: DeliveryRecord) => {
    const records = queue.lanes.get(lane);
    const at = records?.indexOf(record) ?? -1;
    if (at >= 0) records!.splice(at, 1);
    if (records?.length === 0) queue.lanes.delete(lane);
  };

  const attempt = async (queue: EndpointQueue, lane: string, record: DeliveryRecord): Promise<void> => {
    let webhook: WebhookRecord | undefined;
    try {
      webhook = await ports.webhook(queue.tenant, queue.webhookId);
    } catch (err) {
      ports.log.warn("could not read a webhook endpoint; its deliveries wait", { tenant: queue.tenant, webhook: queue.webhookId, err });
      queue.pausedUntil = now() + 1000;
      return;
    }
    if (stopped) return;
    if (!webhook) {
      queue.lanes.clear();
      await ports.dropWebhook(queue.tenant, queue.webhookId).catch(() => {});
      return;
    }
    if (!webhook.enabled) {
      queue.pausedUntil = now() + disabledPollMs;
      return;
    }
    const started = now();
    const headers = signedHeaders(webhook.secret, record.id, Math.floor(started / 1000), record.body);
    const outcome = await ports.post(webhook.url, headers, record.body);
    record.attempts += 1;
    record.lastAttemptAt = new Date(started).toISOString();
    record.durationMs = outcome.durationMs;
    if (outcome.status !== undefined) record.responseStatus = outcome.status;
    else delete record.responseStatus;
    if (outcome.ok) {
      record.status = "succeeded";
      record.deliveredAt = new Date(now()).toISOString();
      delete record.nextAttemptAt;
      delete record.error;
      settle(queue, lane, record);
    } else {
      record.error = outcome.error ?? "failed";
      const delay = retryDelayAfter(record.attempts, options.retryDelaysMs);
      if (delay === undefined) {
        record.status = "failed";
        delete record.nextAttemptAt;
        settle(queue, lane, record);
        const since = Date.parse(record.createdAt);
        const reason = `delivery ${record.id} failed ${record.attempts} times over ${Math.round((now() - since) / 1000)} s; last: ${record.error}`;
        ports.log.warn("disabling a webhook endpoint whose deliveries keep failing", { tenant: queue.tenant, webhook: queue.webhookId, reason });
        await ports.disable(queue.tenant, queue.webhookId, { at: new Date(now()).toISOString(), reason }).catch((err: unknown) =>
          ports.log.warn("could not disable a webhook endpoint", { webhook: queue.webhookId, err }),
        );
      } else {
        record.nextAttemptAt = new Date(now() + delay).toISOString();
      }
    }
    // A state that could not be stored is attempted again after a restart: at least once, never lost.
    await ports.save(record).catch((err: unknown) => ports.log.warn("could not store a delivery's state", { delivery: record.id, err }));
  };

  return {
    add(record) {
      const queue = endpointOf(record);
      const lane = queue.lanes.get(record.lane);
      if (!lane) queue.lanes.set(record.lane, [record]);
      else {
        // In source order, behind the delivery under way (if any).
        let at = lane.length;
        const first = queue.busy.has(record.lane) ? 1 : 0;
        while (at > first && bySource(lane[at - 1]!, record) > 0) at--;
        lane.splice(at, 0, record);
      }
      pump();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await Promise.allSettled([...flights]);
    },
  };
}
