import { sweepOrphans, type ClusterKeys, type ClusterRecordReader, type Logger, type OrphanCandidate } from "@corral/provisioner/sdk";
import type { Ec2Api } from "./ec2-api.js";
import { liveInstances } from "./instances.js";
import { removeKeyPairOfEmptyCluster } from "./key-pairs.js";
import { TAG, tagFilter, type Filter } from "./naming.js";

export interface Ec2SweepOptions {
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

export interface Ec2SweepReport {
  /** Live instances looked at. */
  checked: number;
  /** Ids of the orphan instances terminated. */
  terminated: string[];
  /** Names of the key pairs removed. */
  keyPairs: string[];
}

/** What a tag set says about the cluster something belongs to. */
function owner(id: string, tags: Record<string, string>, createdAtMs: number | undefined): OrphanCandidate | undefined {
  const tenant = tags[TAG.tenant];
  const clusterId = tags[TAG.cluster];
  return tenant && clusterId ? { id, tenant, clusterId, createdAtMs: createdAtMs ?? 0 } : undefined;
}

/**
 * One pass over one account and region (the SDK's `sweepOrphans`): every live instance tagged with this
 * installation whose cluster Corral no longer knows (no record, a record of another tenant, or a terminated
 * cluster) and that was launched longer ago than the grace period is terminated, and the key pair of a cluster
 * left without live instances removed; then key pairs of such clusters whose instances were gone already (a
 * DELETE that failed half-way) go too.
 */
export async function sweepEc2Orphans(options: Ec2SweepOptions): Promise<Ec2SweepReport> {
  const { api, clusterKeys, installation } = options;
  const scope = [tagFilter(TAG.installation, installation), ...(options.scope ?? [])];
  const common = { clusters: options.clusters, graceMs: options.orphanGraceMs, log: options.log, ...(options.now ? { now: options.now } : {}) };
  const removeKeyPair = async (tenant: string, clusterId: string) => {
    await removeKeyPairOfEmptyCluster(api, clusterKeys, installation, tenant, clusterId);
  };

  const live = await liveInstances(api, scope);
  const instances = await sweepOrphans({
    ...common,
    list: async () => live.flatMap((i) => owner(i.id, i.tags, i.launchTime) ?? []),
    remove: async (orphan) => void (await api.terminateInstances([orphan.id])),
    afterCluster: removeKeyPair,
  });

  const terminated = new Set(instances.removed);
  const clustersWithInstances = new Set(live.filter((i) => !terminated.has(i.id)).map((i) => `${i.tags[TAG.tenant]}\0${i.tags[TAG.cluster]}`));
  const pairs = await sweepOrphans({
    ...common,
    list: async () =>
      (await api.describeKeyPairs(scope))
        .flatMap((p) => owner(p.name, p.tags, p.createTime) ?? [])
        .filter((p) => !clustersWithInstances.has(`${p.tenant}\0${p.clusterId}`)),
    remove: (orphan) => removeKeyPair(orphan.tenant, orphan.clusterId),
  });
  return { checked: live.length, terminated: instances.removed, keyPairs: pairs.removed };
}
