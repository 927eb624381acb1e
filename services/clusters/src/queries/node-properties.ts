import type { Identity, Json } from "@corral/contracts";
import { clusterNodeIds } from "../domain/ids.js";
import type { ReadingDeps } from "../adapters/deps.js";
import { findVisibleCluster } from "./visible-cluster.js";

export interface NodePropertiesQuery {
  clusterId: string;
  /** Only these properties of each node; empty: all of them (and its services). */
  properties: readonly string[];
  /** Only nodes with every one of these services. */
  services: readonly string[];
}

/** `POST /getNodeProperties`: node id -> properties, filtered. */
export async function nodeProperties(deps: ReadingDeps, identity: Identity, query: NodePropertiesQuery): Promise<Record<string, Record<string, Json>>> {
  const cluster = await findVisibleCluster(deps, identity, query.clusterId);
  const nodes = await deps.nodes.getMany(cluster.id, clusterNodeIds(cluster));
  const out: Record<string, Record<string, Json>> = {};
  for (const node of nodes) {
    if (!query.services.every((s) => node.services.includes(s))) continue;
    const all: Record<string, Json> = { ...node.properties, services: node.services };
    out[node.id] =
      query.properties.length === 0
        ? all
        : Object.fromEntries(query.properties.filter((p) => all[p] !== undefined).map((p) => [p, all[p] as Json]));
  }
  return out;
}
