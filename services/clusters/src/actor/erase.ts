import { jobCounterName } from "../adapters/counters.js";
import type { EngineDeps } from "../adapters/deps.js";

/**
 * Erases a cluster of a deleted tenant: its nodes, plans and task pages, job counter and provider fields, then its
 * record (last, so a crash part-way finds the cluster again). Not a transition: a deleted tenant's records are
 * erased, whatever state their actors are in. Idempotent.
 */
export async function eraseCluster(deps: EngineDeps, clusterId: string): Promise<void> {
  await Promise.all([
    deps.nodes.removeCluster(clusterId),
    deps.plans.removeCluster(clusterId),
    deps.counters.remove(jobCounterName(clusterId)),
    deps.credentials.wipe(clusterId),
  ]);
  await deps.clusters.remove(clusterId);
}
