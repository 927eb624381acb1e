import { orphanReason, type ClusterKeys, type ClusterRecordHead, type ClusterRecordReader, type Logger } from "@corral/provisioner/sdk";
import type { Ec2Api, Ec2Instance } from "./ec2-api.js";
import { liveInstances } from "./instances.js";
import { removeKeyPairOfEmptyCluster } from "./key-pairs.js";
import { TAG, tagFilter, type Filter } from "./naming.js";

export interface SweepOptions {
  api: Ec2Api;
  clusters: ClusterRecordReader;
  clusterKeys: ClusterKeys;
  /** Only this installation's instances and key pairs are looked at. */
  installation: string;
  log: Logger;
  /** Instances and key pairs younger than this are left alone (their cluster may not be stored yet), ms. */
  orphanGraceMs: number;
  /** Extra tag filters narrowing what is looked at (tests: one tenant). */
  scope?: readonly Filter[];
  now?: () => number;
}

export interface SweepReport {
  /** Live instances looked at. */
  checked: number;
  /** Ids of the orphan instances terminated. */
  terminated: string[];
  /** Names of the key pairs removed. */
  keyPairs: string[];
}

/**
 * One pass over one account and region: every live instance tagged with this installation whose cluster Corral no
 * longer knows (no record, a record of another tenant, or a terminated cluster) and that was launched longer ago
 * than the grace period is terminated; then every key pair of such a cluster that has no live instance left is
 * removed. A failure to read the clusters bucket ends the pass before anything is touched; an instance or key pair
 * that cannot be removed is logged and skipped.
 */
export async function sweepOrphans(options: SweepOptions): Promise<SweepReport> {
  const { api, log } = options;
  const now = options.now ?? Date.now;
  const scope = [tagFilter(TAG.installation, options.installation), ...(options.scope ?? [])];
  const known = new Map<string, ClusterRecordHead | undefined>();
  const whyOrphan = async (tenant: string, clusterId: string) => {
    if (!known.has(clusterId)) known.set(clusterId, await options.clusters.get(clusterId));
    return orphanReason(known.get(clusterId), tenant);
  };
  const isOld = (at: number | undefined) => at === undefined || now() - at >= options.orphanGraceMs;

  const instances = await liveInstances(api, scope);
  const orphans: Array<{ instance: Ec2Instance; why: string }> = [];
  for (const instance of instances) {
    const tenant = instance.tags[TAG.tenant];
    const clusterId = instance.tags[TAG.cluster];
    if (!tenant || !clusterId || !isOld(instance.launchTime)) continue;
    const why = await whyOrphan(tenant, clusterId);
    if (why) orphans.push({ instance, why });
  }
  const terminated: string[] = [];
  for (const { instance, why } of orphans) {
    try {
      await api.terminateInstances([instance.id]);
      terminated.push(instance.id);
      log.info("ec2: orphan instance terminated", { instance: instance.id, tenant: instance.tags[TAG.tenant], clusterId: instance.tags[TAG.cluster], why });
    } catch (err) {
      log.warn("ec2: an orphan instance could not be terminated", { instance: instance.id, error: String(err) });
    }
  }

  const keyPairs: string[] = [];
  for (const pair of await api.describeKeyPairs(scope)) {
    const tenant = pair.tags[TAG.tenant];
    const clusterId = pair.tags[TAG.cluster];
    if (!tenant || !clusterId || !isOld(pair.createTime) || !(await whyOrphan(tenant, clusterId))) continue;
    try {
      if (await removeKeyPairOfEmptyCluster(api, options.clusterKeys, options.installation, tenant, clusterId)) {
        keyPairs.push(pair.name);
        log.info("ec2: key pair of an orphan cluster removed", { keyPair: pair.name, tenant, clusterId });
      }
    } catch (err) {
      log.warn("ec2: the key pair of an orphan cluster could not be removed", { keyPair: pair.name, error: String(err) });
    }
  }
  return { checked: instances.length, terminated, keyPairs };
}
