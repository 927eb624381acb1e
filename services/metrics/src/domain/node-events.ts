/**
 * Node lifecycle events as the metrics service understands them (DESIGN.md "Messages and state": the clusters
 * service publishes `node.created` / `node.deleted` on `corral.events.<tenant>.node.*` when a CREATE or DELETE
 * task completes). Pure: no NATS, no Redis.
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

/**
 * Reads the payload the clusters service publishes (`{type, tenant, clusterId, nodeId, ownerId, time}`, time in
 * ms). Returns `undefined` for anything that is not a well-formed node event, so a bad message can be dropped
 * instead of blocking the stream.
 */
export function parseNodeEvent(payload: unknown): NodeEvent | undefined {
  if (payload === null || typeof payload !== "object") return undefined;
  const p = payload as Record<string, unknown>;
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
