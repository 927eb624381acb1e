import type { NodeHealth, NodeHealthEntry, NodeHealthEvent } from "@corral/contracts";
import type { ClusterNode } from "./records.js";

/** Whether a node's last health check found its machine gone or not answering: the provider cannot reach it. */
export const isUnreachable = (node: Pick<ClusterNode, "health">): boolean => node.health?.state === "missing" || node.health?.state === "unreachable";

/**
 * A node's `checkedAt` is written again without a change once it is this far behind a report: full reports refresh
 * it every few minutes without a write per report.
 */
export const HEALTH_REFRESH_MS = 60_000;

/**
 * The node with a report's finding applied, or undefined when nothing is to be written: the same state and message
 * checked recently enough, or a finding older than the one stored (two checkers for a moment).
 */
export function withHealth(node: ClusterNode, entry: NodeHealthEntry): ClusterNode | undefined {
  const before = node.health;
  if (before && entry.checkedAt <= before.checkedAt) return undefined;
  const same = before !== undefined && before.state === entry.state && before.message === entry.message;
  if (same && entry.checkedAt - before.checkedAt < HEALTH_REFRESH_MS) return undefined;
  const health: NodeHealth = {
    state: entry.state,
    message: entry.message,
    since: before?.state === entry.state ? before.since : entry.checkedAt,
    checkedAt: entry.checkedAt,
  };
  return { ...node, health };
}

/** The `node.health` event of a node whose health went from `before` to `after`; undefined when neither state nor message changed. */
export function nodeHealthEvent(tenant: string, clusterId: string, nodeId: string, before: NodeHealth | undefined, after: NodeHealth): NodeHealthEvent | undefined {
  if (before && before.state === after.state && before.message === after.message) return undefined;
  return {
    type: "node.health",
    tenant,
    clusterId,
    at: after.checkedAt,
    nodeId,
    state: after.state,
    message: after.message,
    since: after.since,
    checkedAt: after.checkedAt,
    ...(before ? { previous: before.state } : {}),
  };
}
