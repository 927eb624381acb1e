/** How node health reads in tables: one node's state, and a cluster's nodes counted by state. */
import { NODE_HEALTH_STATES, type NodeHealthState, type NodeView } from "@corral/contracts";

/** Shown for a node no health check has reported (the provider checks none, or not yet). */
export const UNCHECKED = "unchecked";
export type ShownHealthState = NodeHealthState | typeof UNCHECKED;

export const healthState = (node: Pick<NodeView, "health">): ShownHealthState => node.health?.state ?? UNCHECKED;

/** A cluster's nodes by health state, in the order of {@link NODE_HEALTH_STATES} (healthy first); unchecked last. */
export function healthCounts(nodes: readonly Pick<NodeView, "health">[]): Array<[ShownHealthState, number]> {
  const counts = new Map<ShownHealthState, number>();
  for (const node of nodes) counts.set(healthState(node), (counts.get(healthState(node)) ?? 0) + 1);
  const order: readonly ShownHealthState[] = [...NODE_HEALTH_STATES, UNCHECKED];
  return order.flatMap((state) => {
    const n = counts.get(state);
    return n ? [[state, n] as [ShownHealthState, number]] : [];
  });
}

/** `3 healthy`, `2 healthy, 1 missing`; `-` without nodes. */
export function countsText(counts: Readonly<Record<string, number>>): string {
  const entries = Object.entries(counts);
  return entries.length === 0 ? "-" : entries.map(([state, n]) => `${n} ${state}`).join(", ");
}

export const healthSummary = (nodes: readonly Pick<NodeView, "health">[]): string => countsText(Object.fromEntries(healthCounts(nodes)));
