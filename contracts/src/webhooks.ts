/**
 * Webhooks: endpoints a tenant admin registers to be told of the tenant's cluster events and audit entries by HTTP
 * POST, signed as the Standard Webhooks specification says (docs/webhooks.md). The webhooks service keeps the
 * registrations (KV `corral_webhooks`) and each delivery's state (KV `corral_webhook_deliveries`).
 */
import type { ClusterEventType } from "./cluster-events.js";

/** The cluster event types an endpoint may subscribe to, and `audit`: the tenant's audit entries. */
export const WEBHOOK_EVENT_TYPES = ["cluster.status", "plan.finished", "node.health", "lease.changed", "audit"] as const satisfies ReadonlyArray<
  ClusterEventType | "audit"
>;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
/** The type of what `POST /webhooks/{id}/test` sends. */
export const WEBHOOK_TEST_EVENT = "webhook.test";

/** A secret is `whsec_` and the base64 of its key (Standard Webhooks); the key is 24 to 64 bytes. */
export const WEBHOOK_SECRET_PREFIX = "whsec_";
export const WEBHOOK_SECRET_PATTERN = "^whsec_[A-Za-z0-9+/]{32,88}={0,2}$";

/** Why an endpoint is disabled: the delivery that failed past its retries, or nothing when it is enabled. */
export interface WebhookDisabled {
  /** ISO 8601. */
  at: string;
  reason: string;
}

/** An endpoint as the API shows it: never its secret. */
export interface WebhookView {
  id: string;
  url: string;
  events: WebhookEventType[];
  description: string;
  enabled: boolean;
  /** Present while the endpoint is disabled because its deliveries kept failing. */
  disabled?: WebhookDisabled;
  /** ISO 8601. */
  createdAt: string;
  updatedAt: string;
}

/** What `POST /webhooks` answers: the endpoint and its secret, shown this once. */
export interface CreatedWebhook extends WebhookView {
  secret: string;
}

/** A stored endpoint (KV `corral_webhooks`, key `<tenant>.<id>` tokens). */
export interface WebhookRecord extends WebhookView {
  tenant: string;
  secret: string;
}

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One delivery of one event to one endpoint, as `GET /webhooks/{id}/deliveries` lists it. */
export interface WebhookDelivery {
  /** The `webhook-id` header: the same on every attempt. */
  id: string;
  /** The event type (`cluster.status`, `audit`, `webhook.test`). */
  type: string;
  /** The cluster the event is about ("" for audit entries and tests). */
  clusterId: string;
  status: DeliveryStatus;
  attempts: number;
  /** ISO 8601: when the event was queued, last tried, next tried (pending), delivered (succeeded). */
  createdAt: string;
  lastAttemptAt?: string;
  nextAttemptAt?: string;
  deliveredAt?: string;
  /** The HTTP status of the last attempt (absent: no answer). */
  responseStatus?: number;
  /** How long the last attempt took, ms. */
  durationMs?: number;
  /** Why the last attempt failed. */
  error?: string;
}

/** What `GET /webhooks/{id}/deliveries` answers: the most recent first. */
export interface WebhookDeliveryPage {
  deliveries: WebhookDelivery[];
}

/** The JSON body of every delivery (Standard Webhooks' payload shape). */
export interface WebhookPayload {
  type: string;
  /** ISO 8601: when the event happened. */
  timestamp: string;
  tenant: string;
  data: unknown;
}
