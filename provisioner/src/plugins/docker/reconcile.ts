import { kvKey, type ClusterRecordHead } from "@corral/contracts";
import type { ClusterRecordReader, Logger } from "@corral/shared";
import type { ClusterKeys } from "../../cluster-keys.js";
import { orphanReason } from "../../cluster-records.js";
import { removeKeyOfEmptyCluster } from "./containers.js";
import type { ContainerSummary, DockerClient } from "./docker-api.js";
import { LABEL, managedFilter } from "./naming.js";

export interface ReconcileOptions {
  docker: DockerClient;
  clusters: ClusterRecordReader;
  clusterKeys: ClusterKeys;
  /** Only this installation's containers are looked at. */
  installation: string;
  log: Logger;
  /** Containers younger than this are left alone (their cluster may not be stored yet), ms. */
  orphanGraceMs: number;
  /** Extra `key=value` label terms narrowing the containers looked at (tests: one tenant). */
  scope?: readonly string[];
  now?: () => number;
}

export interface ReconcileReport {
  /** Managed containers looked at. */
  checked: number;
  /** Ids of the orphans removed. */
  removed: string[];
}

/**
 * One pass: every container labelled `corral.managed=docker-provider` whose cluster Corral no longer knows (no
 * record, a record of another tenant, or a terminated cluster) and that is older than the grace period is
 * removed, and the key pair of a cluster left without containers with it. A failure to read the clusters bucket
 * ends the pass before anything is removed; a container that cannot be removed is logged and skipped.
 */
export async function reconcileOrphans(options: ReconcileOptions): Promise<ReconcileReport> {
  const { docker, log } = options;
  const now = options.now ?? Date.now;
  const containers = await docker.listContainers([...managedFilter(options.installation), ...(options.scope ?? [])]);
  const known = new Map<string, ClusterRecordHead | undefined>();
  const lookup = async (clusterId: string) => {
    if (!known.has(clusterId)) known.set(clusterId, await options.clusters.get(clusterId));
    return known.get(clusterId);
  };

  const orphans: Array<{ container: ContainerSummary; tenant: string; clusterId: string; why: string }> = [];
  for (const container of containers) {
    const labels = container.Labels ?? {};
    const tenant = labels[LABEL.tenant];
    const clusterId = labels[LABEL.cluster];
    if (!tenant || !clusterId) continue;
    if (now() - container.Created * 1000 < options.orphanGraceMs) continue;
    const why = orphanReason(await lookup(clusterId), tenant);
    if (why) orphans.push({ container, tenant, clusterId, why });
  }

  const removed: string[] = [];
  const emptied = new Map<string, { tenant: string; clusterId: string }>();
  for (const { container, tenant, clusterId, why } of orphans) {
    try {
      await docker.removeContainer(container.Id);
      removed.push(container.Id);
      emptied.set(kvKey(tenant, clusterId), { tenant, clusterId });
      log.info("docker: orphan container removed", { container: container.Names[0] ?? container.Id, tenant, clusterId, why });
    } catch (err) {
      log.warn("docker: an orphan container could not be removed", { container: container.Id, error: String(err) });
    }
  }
  for (const { tenant, clusterId } of emptied.values()) {
    await removeKeyOfEmptyCluster(docker, options.clusterKeys, options.installation, tenant, clusterId).catch((err: unknown) =>
      log.warn("docker: the key pair of an orphan cluster could not be removed", { tenant, clusterId, error: String(err) }),
    );
  }
  return { checked: containers.length, removed };
}
