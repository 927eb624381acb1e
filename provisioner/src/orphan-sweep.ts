import type { ClusterRecordReader, Logger } from "@corral/shared";
import { kvKey, type ClusterRecordHead } from "@corral/contracts";
import { orphanReason } from "./cluster-records.js";

/** Something a provider made for a node (an instance, a container), as its tags or labels describe it. */
export interface OrphanCandidate {
  /** The provider's id of it (logged and reported). */
  id: string;
  tenant: string;
  clusterId: string;
  /** When it was made, ms since the epoch: younger than the grace period, it is left alone. */
  createdAtMs: number;
}

export interface SweepOrphansOptions<T extends OrphanCandidate> {
  /** Everything this installation's provider made, as far as its tags tell (only what carries the installation id). */
  list(): Promise<readonly T[]>;
  /** Removes one orphan; a throw is logged and the sweep goes on. */
  remove(orphan: T): Promise<void>;
  clusters: ClusterRecordReader;
  /** Left alone while younger than this (its cluster may not be stored yet), ms. */
  graceMs: number;
  log: Logger;
  /** Runs once per cluster that lost something (remove its key pair or key when nothing of it is left). */
  afterCluster?(tenant: string, clusterId: string): Promise<void>;
  /** @default Date.now */
  now?: () => number;
}

/** What one sweep saw and removed. */
export interface SweepReport {
  checked: number;
  /** Ids of the orphans removed. */
  removed: string[];
}

/**
 * One orphan sweep, for any provider: everything `list` returns whose cluster Corral no longer knows (no record,
 * another tenant's record, or terminated; `orphanReason`) and that is older than the grace period is removed. A
 * failure to read a cluster record ends the sweep before anything is removed.
 */
export async function sweepOrphans<T extends OrphanCandidate>(options: SweepOrphansOptions<T>): Promise<SweepReport> {
  const now = options.now ?? Date.now;
  const candidates = await options.list();
  const records = new Map<string, ClusterRecordHead | undefined>();
  const orphans: Array<{ item: T; why: string }> = [];
  for (const item of candidates) {
    if (now() - item.createdAtMs < options.graceMs) continue;
    if (!records.has(item.clusterId)) records.set(item.clusterId, await options.clusters.get(item.clusterId));
    const why = orphanReason(records.get(item.clusterId), item.tenant);
    if (why) orphans.push({ item, why });
  }
  const removed: string[] = [];
  const emptied = new Map<string, { tenant: string; clusterId: string }>();
  for (const { item, why } of orphans) {
    try {
      await options.remove(item);
      removed.push(item.id);
      emptied.set(kvKey(item.tenant, item.clusterId), { tenant: item.tenant, clusterId: item.clusterId });
      options.log.info("orphan removed", { id: item.id, tenant: item.tenant, clusterId: item.clusterId, why });
    } catch (err) {
      options.log.warn("an orphan could not be removed", { id: item.id, error: String(err) });
    }
  }
  for (const { tenant, clusterId } of emptied.values()) {
    await options.afterCluster?.(tenant, clusterId).catch((err: unknown) =>
      options.log.warn("cleaning up after an orphan cluster failed", { tenant, clusterId, error: String(err) }),
    );
  }
  return { checked: candidates.length, removed };
}
