import { seesSecrets, type ClusterDetails, type ClusterStatus, type ClusterStatusView, type ClusterSummary, type Identity } from "@corral/contracts";
import { currentPlanOf, isVisibleTo, statusOf } from "../domain/cluster-status.js";
import { clusterNodeIds } from "../domain/ids.js";
import type { ClusterRecord } from "../domain/records.js";
import { withoutProviderSecrets } from "../domain/secrets.js";
import { clusterDetails, clusterStatus, clusterSummary, progressOf, type Progress } from "../domain/views.js";
import type { ReadingDeps } from "../adapters/deps.js";
import { findVisibleCluster } from "./visible-cluster.js";

/** Progress of the cluster's job, counted from its current plan while it runs. */
async function liveProgress(deps: ReadingDeps, cluster: ClusterRecord): Promise<Progress> {
  const plan = statusOf(cluster) === "pending" ? (await deps.plans.get(cluster.id, currentPlanOf(cluster)))?.value : undefined;
  return progressOf(cluster, plan);
}

/** `GET /clusters`: the clusters the caller may see, in one of `statuses` when given, newest first. */
export async function listClusters(deps: ReadingDeps, identity: Identity, statuses?: ReadonlySet<ClusterStatus>): Promise<ClusterSummary[]> {
  const visible = (await deps.clusters.all()).filter((c) => isVisibleTo(c, identity) && (!statuses || statuses.has(statusOf(c))));
  visible.sort((a, b) => b.createTime - a.createTime || (a.id < b.id ? 1 : -1));
  return Promise.all(visible.map(async (c) => clusterSummary(c, await liveProgress(deps, c))));
}

/** `GET /clusters/{id}`: with its nodes; provider secrets only for a caller who sees secrets. */
export async function clusterDetailsOf(deps: ReadingDeps, identity: Identity, id: string): Promise<ClusterDetails> {
  const cluster = await findVisibleCluster(deps, identity, id);
  const nodes = await deps.nodes.getMany(cluster.id, clusterNodeIds(cluster));
  const shown = seesSecrets(identity)
    ? { cluster, nodes }
    : withoutProviderSecrets(cluster, nodes, await deps.tenancy.providerType(cluster.provider.providertype));
  return clusterDetails(shown.cluster, shown.nodes, await liveProgress(deps, cluster));
}

/** `GET /clusters/{id}/status`. */
export async function clusterStatusOf(deps: ReadingDeps, identity: Identity, id: string): Promise<ClusterStatusView> {
  const cluster = await findVisibleCluster(deps, identity, id);
  return clusterStatus(cluster, await liveProgress(deps, cluster));
}
