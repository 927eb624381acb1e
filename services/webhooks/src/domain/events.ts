import {
  auditSubject,
  clientEventsOf,
  entriesOfAuditMessage,
  WEBHOOK_EVENT_TYPES,
  type AuditEntry,
  type ClusterStreamEvent,
  type WebhookEventType,
  type WebhookPayload,
} from "@corral/contracts";

/** One event a webhook may be told of, with where it came from (the order of its lane). */
export interface WebhookEvent {
  tenant: string;
  type: WebhookEventType;
  /** The cluster it is about; "" for audit entries. */
  clusterId: string;
  /** ms since the epoch: when it happened. */
  at: number;
  data: unknown;
  /** Its stream (`e`: cluster events, `a`: audit entries) and sequence, and its place among the events one message holds. */
  source: { stream: "e" | "a"; seq: number; index: number };
}

const DELIVERED_TYPES: ReadonlySet<string> = new Set<string>(WEBHOOK_EVENT_TYPES);

/**
 * The webhook events of one stored cluster event: those it holds for clients (a `plan.progress` carries the
 * `plan.finished` of its plan), of the types webhooks are told of.
 */
export function eventsOfClusterMessage(stored: ClusterStreamEvent, seq: number): WebhookEvent[] {
  const out: WebhookEvent[] = [];
  clientEventsOf(stored).forEach((event, index) => {
    if (!DELIVERED_TYPES.has(event.type)) return;
    out.push({
      tenant: event.tenant,
      type: event.type as WebhookEventType,
      clusterId: event.clusterId,
      at: event.at,
      data: event,
      source: { stream: "e", seq, index },
    });
  });
  return out;
}

/** The webhook event of an audit entry, the `index`th of its message; none for an entry of no tenant (a refused token). */
export function eventOfAuditEntry(entry: AuditEntry, seq: number, index = 0): WebhookEvent | undefined {
  if (entry.tenant === "") return undefined;
  const at = Date.parse(entry.time);
  return { tenant: entry.tenant, type: "audit", clusterId: "", at: Number.isNaN(at) ? Date.now() : at, data: entry, source: { stream: "a", seq, index } };
}

/**
 * The webhook events of one audit stream message (a single entry or a batch), in the order recorded: each entry
 * its own event, told apart by its place in the message. Only entries of the tenant whose subject the message is
 * on: a tenant's endpoints never hear of another's entries, whatever a message holds.
 */
export function eventsOfAuditMessage(message: unknown, subject: string, seq: number): WebhookEvent[] {
  return entriesOfAuditMessage(message).flatMap((entry, index) => {
    if (auditSubject(entry.tenant) !== subject) return [];
    const event = eventOfAuditEntry(entry, seq, index);
    return event ? [event] : [];
  });
}

/** The lane a delivery waits in: events of one cluster are delivered in order, and so are audit entries. */
export const laneOf = (event: Pick<WebhookEvent, "type" | "clusterId">): string => (event.type === "audit" ? "audit" : `cluster:${event.clusterId}`);

/** The `webhook-id` of an event's delivery to one endpoint: the same on every attempt, and after a restart. */
export function deliveryIdOf(webhookId: string, source: WebhookEvent["source"]): string {
  return `msg_${webhookId}_${source.stream}${String(source.seq).padStart(12, "0")}_${source.index}`;
}

/** The JSON body of a delivery. */
export function payloadOf(event: { tenant: string; type: string; at: number; data: unknown }): string {
  const payload: WebhookPayload = { type: event.type, timestamp: new Date(event.at).toISOString(), tenant: event.tenant, data: event.data };
  return JSON.stringify(payload);
}
