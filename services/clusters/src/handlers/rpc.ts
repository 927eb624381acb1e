import type { Json } from "@corral/contracts";
import type { EndpointHandlers } from "@corral/shared";
import { nodeIdsOf } from "../domain/ids.js";
import { parseNodePropertiesRequest } from "../domain/requests.js";
import { findVisibleCluster } from "../operations/index.js";
import type { HandlerDeps } from "./context.js";

/** `POST /getNodeProperties` (spec 4.11): node id -> properties, filtered. */
export function rpcHandlers(h: HandlerDeps) {
  return {
    "clusters.nodeProperties": async (req) => {
      const { clusterId, properties, services } = parseNodePropertiesRequest(req.body);
      const cluster = await findVisibleCluster(h.deps, req.identity, clusterId);
      const nodes = await h.deps.nodes.getMany(cluster.id, nodeIdsOf(cluster.id, cluster.numNodes));
      const out: Record<string, Record<string, Json>> = {};
      for (const node of nodes) {
        if (!services.every((s) => node.services.includes(s))) continue;
        const all: Record<string, Json> = { ...node.properties, services: node.services };
        out[node.id] =
          properties.length === 0
            ? all
            : Object.fromEntries(properties.filter((p) => all[p] !== undefined).map((p) => [p, all[p] as Json]));
      }
      return out;
    },
  } satisfies EndpointHandlers<"clusters">;
}
