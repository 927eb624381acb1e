import type { EndpointHandlers } from "@corral/shared";
import { clusterIdOf, jobOperationsFor, type HandlerDeps } from "./context.js";

/** Day-two changes of a cluster's nodes. */
export function nodeHandlers(h: HandlerDeps) {
  return {
    "clusters.addNodes": async (req) => jobOperationsFor(h, req).addNodes(req.identity, clusterIdOf(req), req.body),
    "clusters.removeNode": async (req) =>
      jobOperationsFor(h, req).removeNodes(req.identity, clusterIdOf(req), { ...req.body, nodes: [req.params.nodeId ?? ""] }),
    "clusters.removeNodes": async (req) => jobOperationsFor(h, req).removeNodes(req.identity, clusterIdOf(req), req.body),
    "clusters.replaceNode": async (req) =>
      jobOperationsFor(h, req).replaceNode(req.identity, clusterIdOf(req), req.params.nodeId ?? "", req.body ?? {}),
  } satisfies EndpointHandlers<"clusters">;
}
