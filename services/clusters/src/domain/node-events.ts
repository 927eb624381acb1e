import { createHash } from "node:crypto";
import { TaskName, type TaskResult } from "@corral/contracts";

/** Node lifecycle events for metrics (docs/architecture.md, Events). */
export interface NodeEvent {
  type: "node.created" | "node.deleted";
  tenant: string;
  clusterId: string;
  nodeId: string;
  ownerId: string;
  /** ms */
  time: number;
  /** The dispatch that created or deleted the machine: a machine re-created by a rollback is a new event. */
  taskId: string;
  dispatch: number;
}

/** The event kind (`corral.events.<tenant>.node.changes`) of one message carrying a results batch's node events. */
export const NODE_CHANGES = "node.changes";

/** One tenant's node events of a results batch: one stored message instead of one per event. */
export interface NodeChanges {
  type: typeof NODE_CHANGES;
  tenant: string;
  events: NodeEvent[];
}

/** The node event type of a successful CREATE or DELETE result; undefined for any other result. */
export function nodeEventTypeOf(result: TaskResult): NodeEvent["type"] | undefined {
  if (result.status !== 0) return undefined;
  return result.taskName === TaskName.Create ? "node.created" : result.taskName === TaskName.Delete ? "node.deleted" : undefined;
}

/** The node event of a result that makes one (`nodeEventTypeOf`); `ownerId` is the cluster's owner. */
export function nodeEventOf(result: TaskResult, type: NodeEvent["type"], ownerId: string): NodeEvent {
  const { tenant, clusterId, nodeId, taskId, dispatch } = result;
  return { type, tenant, clusterId, nodeId, ownerId, time: result.endTime, taskId, dispatch };
}

/**
 * `events` as one message per tenant, each with a message id derived from the events it carries (whatever their
 * order), so the same batch published again after a crash is dropped by JetStream.
 */
export function nodeChangesByTenant(events: readonly NodeEvent[]): Array<{ body: NodeChanges; msgId: string }> {
  const byTenant = new Map<string, NodeEvent[]>();
  for (const event of events) {
    const group = byTenant.get(event.tenant);
    if (group) group.push(event);
    else byTenant.set(event.tenant, [event]);
  }
  return [...byTenant].map(([tenant, group]) => ({
    body: { type: NODE_CHANGES, tenant, events: group },
    msgId: nodeChangesMessageId(group),
  }));
}

function nodeChangesMessageId(events: readonly NodeEvent[]): string {
  const causes = events.map((e) => `${e.type}.${e.taskId}.${e.dispatch}`).sort();
  return `${NODE_CHANGES}.${createHash("sha256").update(causes.join("\n")).digest("base64url").slice(0, 32)}`;
}
