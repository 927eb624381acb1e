import { isTerminatedCluster, NODE_HEALTH_STATES, type NodeHealthEntry, type NodeHealthEvent, type NodeHealthReport } from "@corral/contracts";
import type { ReadingDeps } from "../../adapters/deps.js";
import { followHealthReports, type HealthReportFeed } from "../../adapters/health-reports.js";
import { currentPlanOf, statusOf } from "../../domain/cluster-status.js";
import { clusterNodeIds } from "../../domain/ids.js";
import { leavingNodeIds } from "../../domain/node-config.js";
import { nodeHealthEvent, withHealth } from "../../domain/node-health.js";
import type { NodeChange } from "../../adapters/node-store.js";
import type { ClusterNode, ClusterRecord } from "../../domain/records.js";

/** Longest message kept of a finding. */
const MAX_MESSAGE_CHARS = 1_000;

/**
 * Keeps nodes' health from the provisioners' reports (docs/providers.md, Node health): each finding is written into
 * its node when it changes the state or message (or refreshes an old `checkedAt`), per cluster in one write of its
 * nodes, and every change of state or message is published as a `node.health` event. Findings of clusters that are
 * unknown, another tenant's or terminated, of nodes the cluster does not have, and of nodes its running plan deletes
 * (a removal's, a replacement's, a cluster delete's) are ignored.
 */
export function startHealthReports(deps: ReadingDeps): HealthReportFeed {
  return followHealthReports(deps.nc, deps.log, (tenant, report) => applyHealthReport(deps, tenant, report));
}

export async function applyHealthReport(deps: ReadingDeps, tenant: string, report: NodeHealthReport): Promise<void> {
  const byCluster = new Map<string, NodeHealthEntry[]>();
  for (const entry of report.nodes) {
    if (!isEntry(entry)) continue;
    const kept = entry.message.length > MAX_MESSAGE_CHARS ? { ...entry, message: entry.message.slice(0, MAX_MESSAGE_CHARS) } : entry;
    const list = byCluster.get(entry.clusterId);
    if (list) list.push(kept);
    else byCluster.set(entry.clusterId, [kept]);
  }
  const events: NodeHealthEvent[] = [];
  for (const [clusterId, entries] of byCluster) {
    const cluster = (await deps.clusters.get(clusterId))?.value;
    if (!cluster || cluster.tenant !== tenant || isTerminatedCluster({ tenant, status: statusOf(cluster) })) continue;
    // A node that left (removed, or replaced while its machine was unreachable) keeps its stored record, and a
    // node the running plan deletes (a removal's, a replacement's, a cluster delete's) vanishes by Corral's own hand:
    // neither is a finding.
    if (isBeingDeleted(cluster)) continue;
    const leaving = statusOf(cluster) === "pending" ? leavingNodeIds(cluster, currentPlanOf(cluster)) : new Set<string>();
    const members = new Set(clusterNodeIds(cluster).filter((id) => !leaving.has(id)));
    const before = new Map<string, ClusterNode>();
    const changes = new Map<string, NodeChange>(
      entries.filter((entry) => members.has(entry.nodeId)).map((entry) => [
        entry.nodeId,
        (node) => {
          before.set(node.id, node);
          return withHealth(node, entry);
        },
      ]),
    );
    const written = await deps.nodes.modifyMany(clusterId, changes);
    for (const [nodeId, node] of written) {
      const event = node.health && nodeHealthEvent(tenant, clusterId, nodeId, before.get(nodeId)?.health, node.health);
      if (event) events.push(event);
    }
  }
  deps.publisher.publishClusterEvents(events);
}

const isBeingDeleted = (cluster: ClusterRecord): boolean => statusOf(cluster) === "pending" && cluster.actor.context.action === "cluster_delete";

function isEntry(e: NodeHealthEntry): boolean {
  return (
    typeof e === "object" &&
    e !== null &&
    typeof e.clusterId === "string" &&
    typeof e.nodeId === "string" &&
    (NODE_HEALTH_STATES as readonly string[]).includes(e.state) &&
    typeof e.message === "string" &&
    Number.isFinite(e.checkedAt)
  );
}
