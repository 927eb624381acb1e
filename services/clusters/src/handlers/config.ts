import type { EndpointHandlers } from "@corral/shared";
import { parseConfigUpdate } from "../domain/requests.js";
import { clusterIdOf, jobOperationsFor, type HandlerDeps } from "./context.js";

export function configHandlers(h: HandlerDeps) {
  return {
    "clusters.getConfig": async (req) => h.queries.config(req.identity, clusterIdOf(req)),
    "clusters.putConfig": async (req) => jobOperationsFor(h, req).configure(req.identity, clusterIdOf(req), parseConfigUpdate(req.body)),
  } satisfies EndpointHandlers<"clusters">;
}
