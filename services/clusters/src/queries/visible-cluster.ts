import type { Identity } from "@corral/contracts";
import { visibleCluster } from "../domain/cluster-status.js";
import type { ClusterRecord } from "../domain/records.js";
import type { ReadingDeps } from "../adapters/deps.js";

/** The cluster `id`, if `identity` may see it (404 otherwise). */
export async function findVisibleCluster(deps: ReadingDeps, identity: Identity, id: string): Promise<ClusterRecord> {
  return visibleCluster((await deps.clusters.get(id))?.value, identity, id);
}
