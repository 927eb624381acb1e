/**
 * Node lifecycle events as the metrics service understands them (docs/architecture.md, Events: the clusters
 * service publishes `node.created` / `node.deleted` events when a CREATE or DELETE task completes: one
 * `node.changes` message per tenant and results batch on `corral.events.<tenant>.node.changes`; older history holds
 * one message per event on `corral.events.<tenant>.node.created|deleted`). Pure: no NATS, no Redis.
 */

export const NodeEventKind = { Created: "created", Deleted: "deleted" } as const;
export type NodeEventKind = (typeof NodeEventKind)[keyof typeof NodeEventKind];

/** One node event, normalised: time in whole seconds (the millisecond time floored). */
export interface NodeEvent {
  kind: NodeEventKind;
  tenant: string;
  clusterId: string;
  nodeId: string;
  /** The user owning the node's cluster. */
  ownerId: string;
  /** Unix seconds, floored from the event's millisecond time; never negative. */
  timeSeconds: number;
}

const isText = (v: unknown): v is string => typeof v === "string" && v.length > 0;
const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object";

/**
 * Reads one node event as the clusters service publishes it (`{type, tenant, clusterId, nodeId, ownerId, time}`,
 * time in ms); `undefined` for anything else.
 */
function parseOne(payload: unknown): NodeEvent | undefined {
  if (!isRecord(payload)) return undefined;
  const p = payload;
  const kind = p["type"] === "node.created" ? NodeEventKind.Created : p["type"] === "node.deleted" ? NodeEventKind.Deleted : undefined;
  const time = p["time"];
  if (!kind || !isText(p["tenant"]) || !isText(p["clusterId"]) || !isText(p["nodeId"])) return undefined;
  if (typeof time !== "number" || !Number.isFinite(time)) return undefined;
  const ownerId = typeof p["ownerId"] === "string" ? p["ownerId"] : "";
  return {
    kind,
    tenant: p["tenant"],
    clusterId: p["clusterId"],
    nodeId: p["nodeId"],
    ownerId,
    timeSeconds: Math.max(0, Math.floor(time / 1000)),
  };
}

/** What one message held: its well-formed node events, and how many parts of it were not node events. */
export interface ParsedNodeEvents {
  events: NodeEvent[];
  malformed: number;
}

/**
 * Reads a message of the events stream's `node.*` subjects: a results batch's node events
 * (`{type: "node.changes", tenant, events: [...]}`), or a single `node.created` / `node.deleted` event as the
 * stream's older history holds them. Never throws: a malformed event (or one of another tenant than its batch)
 * counts in `malformed`, a whole message that is neither form counts as one, and the well-formed ones are kept, so
 * a bad message can be dropped instead of blocking the stream.
 */
export function parseNodeEvents(payload: unknown): ParsedNodeEvents {
  if (!isRecord(payload) || payload["type"] !== "node.changes") {
    const single = parseOne(payload);
    return single ? { events: [single], malformed: 0 } : { events: [], malformed: 1 };
  }
  const parts = payload["events"];
  if (!Array.isArray(parts) || !isText(payload["tenant"])) return { events: [], malformed: 1 };
  const events: NodeEvent[] = [];
  for (const part of parts) {
    const event = parseOne(part);
    // The clusters service groups a batch's events by tenant: another tenant's event here is not to be believed.
    if (event && event.tenant === payload["tenant"]) events.push(event);
  }
  return { events, malformed: parts.length - events.length };
}
