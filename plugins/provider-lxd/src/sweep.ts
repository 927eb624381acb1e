import { sweepOrphans, type ClusterKeys, type ClusterRecordReader, type Logger, type SweepReport } from "@corral/provisioner/sdk";
import { managedInstances, removeInstance, removeKeyOfEmptyCluster } from "./instances.js";
import type { LxdClient } from "./lxd-api.js";
import { CONFIG } from "./naming.js";

export interface LxdSweepOptions {
  lxd: LxdClient;
  clusters: ClusterRecordReader;
  clusterKeys: ClusterKeys;
  /** Only this installation's instances are looked at. */
  installation: string;
  log: Logger;
  /** Instances younger than this are left alone (their cluster may not be stored yet), ms. */
  orphanGraceMs: number;
  /** Narrows the instances looked at (tests: one tenant). */
  only?: (tenant: string) => boolean;
  now?: () => number;
}

/**
 * One orphan sweep of an LXD endpoint and project: every instance carrying this installation's
 * `user.corral.managed=lxd-provider` whose cluster Corral no longer knows (no record, another tenant's record, or
 * terminated) and that is older than the grace period is stopped and deleted, and the key pair of a cluster left
 * without instances with it.
 */
export async function sweepLxdOrphans(options: LxdSweepOptions): Promise<SweepReport> {
  const { lxd, log } = options;
  return sweepOrphans({
    list: async () =>
      (await managedInstances(lxd, options.installation))
        .map((i) => ({
          id: i.name,
          tenant: i.config[CONFIG.tenant] ?? "",
          clusterId: i.config[CONFIG.cluster] ?? "",
          createdAtMs: Date.parse(i.created_at) || 0,
        }))
        .filter((c) => c.tenant !== "" && c.clusterId !== "" && (options.only?.(c.tenant) ?? true)),
    remove: async (orphan) => {
      await removeInstance(lxd, orphan.id);
    },
    afterCluster: async (tenant, clusterId) => {
      await removeKeyOfEmptyCluster(lxd, options, tenant, clusterId);
    },
    clusters: options.clusters,
    graceMs: options.orphanGraceMs,
    log,
    ...(options.now ? { now: options.now } : {}),
  });
}
