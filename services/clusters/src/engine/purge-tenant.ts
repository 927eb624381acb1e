// Outside the actors on purpose: a deleted tenant's records are erased, not transitioned (through the actors' stores).
import type { TenantMessages } from "../adapters/tenant-messages.js";
import { jobCounterName } from "../adapters/counters.js";
import { statusOf } from "../domain/cluster-status.js";
import type { EngineDeps } from "./deps.js";

/** Clusters removed per request, so one answer never waits on thousands of them. */
export const PURGE_BATCH = 100;

export interface PurgeProgress {
  /** True once nothing of the tenant is left in this service. */
  done: boolean;
  /** Clusters removed by this call. */
  removed: number;
}

/**
 * Removes what the clusters service keeps for a deleted tenant: each cluster's nodes, plans and task pages, job
 * counter and provider fields, then its record (last, so a crash part-way finds the cluster again); once no
 * cluster is left, the tenant's messages and usage. Idempotent; called again until `done`.
 */
export async function purgeTenant(deps: EngineDeps, messages: TenantMessages, tenant: string): Promise<PurgeProgress> {
  const owned = (await deps.clusters.all()).filter((c) => c.tenant === tenant);
  const batch = owned.slice(0, PURGE_BATCH);
  const live = batch.filter((c) => statusOf(c) !== "terminated");
  // Tenancy deletes only a tenant without live clusters and refuses new ones first; one here slipped past that.
  if (live.length > 0) deps.log.warn("purging live clusters of a deleted tenant", { tenant, clusters: live.map((c) => c.id) });
  for (const cluster of batch) {
    await Promise.all([
      deps.nodes.removeCluster(cluster.id),
      deps.plans.removeCluster(cluster.id),
      deps.counters.remove(jobCounterName(cluster.id)),
      deps.credentials.wipe(cluster.id),
    ]);
    await deps.clusters.remove(cluster.id);
  }
  if (owned.length > batch.length) return { done: false, removed: batch.length };
  await messages.purge(tenant);
  await deps.usage.remove(tenant);
  return { done: true, removed: batch.length };
}
