/**
 * The node-usage definition written the slow, obvious way (services/metrics/README.md), for
 * tests and the benchmark to check the Redis store against: replay the events, then sum each node's overlap.
 */
import type { NodeEvent, UsageScope } from "@corral/metrics/testing";

export interface OracleNode {
  tenant: string;
  owner: string;
  created?: number;
  deleted?: number;
}

/** Replays events in order: per node the first creation and the first deletion win; the owner of the first event. */
export function replay(events: Iterable<NodeEvent>, nodes = new Map<string, OracleNode>()): Map<string, OracleNode> {
  for (const e of events) {
    const key = JSON.stringify([e.tenant, e.clusterId, e.nodeId]);
    let node = nodes.get(key);
    if (!node) nodes.set(key, (node = { tenant: e.tenant, owner: e.ownerId }));
    if (e.kind === "created") node.created ??= e.timeSeconds;
    else node.deleted ??= e.timeSeconds;
  }
  return nodes;
}

export function inScope(node: OracleNode, scope: UsageScope): boolean {
  switch (scope.kind) {
    case "all":
      return true;
    case "tenant":
      return node.tenant === scope.tenant;
    case "tenantUser":
      return node.tenant === scope.tenant && node.owner === scope.user;
    case "user":
      return node.owner === scope.user;
  }
}

/** Node-seconds of the nodes in scope over [start, end], nothing counted after `now` (all seconds). */
export function oracleUsage(
  nodes: Iterable<OracleNode>,
  scope: UsageScope,
  window: { start?: number; end: number },
  now: number,
): { start: number; end: number; value: number } {
  const matching = [...nodes].filter((n) => n.created !== undefined && inScope(n, scope));
  let start = window.start;
  if (start === undefined) {
    let first = Infinity;
    for (const n of matching) first = Math.min(first, n.created!);
    start = first === Infinity ? 0 : Math.min(first, window.end);
  }
  const from = Math.min(start, now);
  const to = Math.min(window.end, now);
  let value = 0;
  for (const n of matching) {
    const created = n.created!;
    const deleted = n.deleted === undefined ? Infinity : Math.max(created, n.deleted);
    value += Math.max(0, Math.min(deleted, to) - Math.max(created, from));
  }
  return { start, end: window.end, value };
}
