import type { EndpointHandlers } from "@corral/shared";
import type { HandlerDeps } from "./context.js";

/** `POST /getNodeProperties`: node id -> properties, filtered. */
export function rpcHandlers({ queries }: HandlerDeps) {
  return {
    "clusters.nodeProperties": async (req) => {
      const { clusterId, properties = [], services = [] } = req.body;
      return queries.nodeProperties(req.identity, { clusterId, properties, services });
    },
  } satisfies EndpointHandlers<"clusters">;
}
