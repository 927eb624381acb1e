import type { EndpointHandlers } from "@corral/shared";
import { clusterIdOf, jobOperationsFor, type HandlerDeps } from "./context.js";

/** Day-two changes of a cluster's nodes. */
export function nodeHandlers(h: HandlerDeps) {
  return {
    "clusters.addNodes": async (req) => jobOperationsFor(h, req).addNodes(req.identity, clusterIdOf(req), req.body),
  } satisfies EndpointHandlers<"clusters">;
}
