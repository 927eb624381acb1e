import type { EndpointHandlers } from "@corral/shared";
import { clusterIdOf, type HandlerDeps } from "./context.js";

export function planHandlers({ queries }: HandlerDeps) {
  return {
    "clusters.plans": async (req) => queries.plans(req.identity, clusterIdOf(req)),
    "clusters.plan": async (req) => queries.plan(req.identity, clusterIdOf(req), req.params["planId"] ?? ""),
  } satisfies EndpointHandlers<"clusters">;
}
