import type { NatsConnection } from "@nats-io/transport-node";
import { encode, healthReportSubject, MAX_HEALTH_REPORT_NODES, type NodeHealthEntry, type NodeHealthReport } from "@corral/contracts";

/** Publishes a tenant's entries as reports of at most `MAX_HEALTH_REPORT_NODES` nodes each (core NATS: at most once). */
export function publishHealthReport(nc: NatsConnection, tenant: string, provisionerId: string, full: boolean, entries: readonly NodeHealthEntry[]): void {
  for (let at = 0; at < entries.length; at += MAX_HEALTH_REPORT_NODES) {
    const report: NodeHealthReport = { tenant, provisionerId, full, nodes: entries.slice(at, at + MAX_HEALTH_REPORT_NODES) };
    nc.publish(healthReportSubject(tenant), encode(report));
  }
}

/**
 * What a provisioner last reported of each node of one tenant, by target key: a new finding is a change when its
 * state or message differs.
 */
export class ReportedHealth {
  private readonly byKey = new Map<string, NodeHealthEntry>();

  /** Records the findings; answers those that changed (a node's first finding included). */
  record(found: ReadonlyArray<{ key: string; entry: NodeHealthEntry }>): NodeHealthEntry[] {
    const changed: NodeHealthEntry[] = [];
    for (const { key, entry } of found) {
      const before = this.byKey.get(key);
      this.byKey.set(key, entry);
      if (!before || before.state !== entry.state || before.message !== entry.message) changed.push(entry);
    }
    return changed;
  }

  /** Forgets the nodes whose keys are not in `live` (their targets are gone). */
  keepOnly(live: ReadonlySet<string>): void {
    for (const key of this.byKey.keys()) if (!live.has(key)) this.byKey.delete(key);
  }

  all(): NodeHealthEntry[] {
    return [...this.byKey.values()];
  }

  get size(): number {
    return this.byKey.size;
  }
}
