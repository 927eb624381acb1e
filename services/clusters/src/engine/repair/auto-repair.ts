import type { ReadingDeps } from "../../adapters/deps.js";
import { statusOf } from "../../domain/cluster-status.js";
import { clusterNodeIds } from "../../domain/ids.js";
import type { ClusterRecord } from "../../domain/records.js";
import { nodeDueForRepair, repairPolicyOf } from "./policy.js";

/** What a repair is carried out with (the replace operation; service.ts wires it in). */
export interface RepairActions {
  /** Starts the replacement of a node of `cluster`, read just before; answers the plan id. */
  repairNode(cluster: ClusterRecord, nodeId: string): Promise<string>;
}

/**
 * Automatic repair (docs/catalog.md, Growing and shrinking): each run replaces, in every active cluster whose
 * template turns repair on, the node whose machine has been missing or unreachable longest past the template's
 * time. Everything it decides on is stored state read afresh (the cluster record and its nodes' health), so a
 * process killed at any point repairs on its next run what it had not started; a replacement once started is the
 * cluster's running job, so none starts while it runs (the cluster is pending), and the cluster actor refuses one
 * prepared before an earlier replacement of the same node ended (cluster-steps.ts, checkLeavingNodes). A cluster a
 * failed repair left inconsistent is not repaired again until someone makes it active.
 */
export function createAutoRepair(deps: ReadingDeps, actions: RepairActions) {
  const repairCluster = async (id: string) => {
    // The mirror may be behind a replacement that just ended: read the record itself.
    const cluster = (await deps.clusters.get(id))?.value;
    const policy = cluster && statusOf(cluster) === "active" ? repairPolicyOf(cluster.clusterTemplate) : undefined;
    if (!cluster || !policy) return;
    const nodes = await deps.nodes.getMany(cluster.id, clusterNodeIds(cluster));
    const node = nodeDueForRepair(nodes, policy, deps.now());
    if (!node) return;
    deps.log.info("repairing a node: its machine is gone or does not answer", { cluster: cluster.id, node: node.id, health: node.health });
    const planId = await actions.repairNode(cluster, node.id);
    deps.log.info("repair started", { cluster: cluster.id, node: node.id, plan: planId });
  };

  return {
    async run(): Promise<void> {
      for (const cluster of await deps.clusters.all()) {
        if (statusOf(cluster) !== "active" || !repairPolicyOf(cluster.clusterTemplate)) continue;
        await repairCluster(cluster.id).catch((err: unknown) => deps.log.warn("automatic repair failed", { cluster: cluster.id, err }));
      }
    },
  };
}
