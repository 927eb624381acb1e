import type { Identity } from "@corral/contracts";
import type { Actors } from "../actor/index.js";
import { visibleCluster } from "../domain/cluster-status.js";
import type { ClusterRecord } from "../domain/records.js";
import type { EngineDeps } from "../engine/deps.js";

/** What every operation needs: the stores and clients, and the actors through which every change goes. */
export interface OperationContext {
  deps: EngineDeps;
  actors: Actors;
}

/** The cluster `id`, if `identity` may see it (404 otherwise). */
export async function findVisibleCluster(deps: EngineDeps, identity: Identity, id: string): Promise<ClusterRecord> {
  return visibleCluster((await deps.clusters.get(id))?.value, identity, id);
}
