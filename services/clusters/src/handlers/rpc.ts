import type { EndpointHandlers } from "@corral/shared";
import { parseNodePropertiesRequest } from "../domain/requests.js";
import type { HandlerDeps } from "./context.js";

/** `POST /getNodeProperties`: node id -> properties, filtered. */
export function rpcHandlers({ queries }: HandlerDeps) {
  return {
    "clusters.nodeProperties": async (req) => queries.nodeProperties(req.identity, parseNodePropertiesRequest(req.body)),
  } satisfies EndpointHandlers<"clusters">;
}
