import { statusOf } from "../domain/cluster-status.js";
import type { OperationContext } from "./context.js";

/** Clusters removed per request, so one answer never waits on thousands of them. */
export const PURGE_BATCH = 100;

export interface PurgeProgress {
  /** True once nothing of the tenant is left in this service. */
  done: boolean;
  /** Clusters removed by this call. */
  removed: number;
}

/**
 * Removes what the clusters service keeps for a deleted tenant: each cluster with everything kept for it (through
 * the actors, `eraseCluster`); once no cluster is left, the tenant's messages and usage. Idempotent; called again
 * until `done`.
 */
export async function purgeTenant({ deps, actors }: OperationContext, tenant: string): Promise<PurgeProgress> {
  const owned = (await deps.clusters.all()).filter((c) => c.tenant === tenant);
  const batch = owned.slice(0, PURGE_BATCH);
  const live = batch.filter((c) => statusOf(c) !== "terminated");
  // Tenancy deletes only a tenant without live clusters and refuses new ones first; one here slipped past that.
  if (live.length > 0) deps.log.warn("purging live clusters of a deleted tenant", { tenant, clusters: live.map((c) => c.id) });
  for (const cluster of batch) await actors.eraseCluster(cluster.id);
  if (owned.length > batch.length) return { done: false, removed: batch.length };
  await deps.tenantMessages.purge(tenant);
  await deps.usage.remove(tenant);
  return { done: true, removed: batch.length };
}
