import type { EndpointHandlers } from "@corral/shared";
import { parseConfigUpdate } from "../domain/requests.js";
import { clusterFor, clusterIdOf, jobOperationsFor, type HandlerDeps } from "./context.js";

export function configHandlers(h: HandlerDeps) {
  return {
    "clusters.getConfig": async (req) => (await clusterFor(h, req)).config,
    "clusters.putConfig": async (req) => jobOperationsFor(h, req).configure(req.identity, clusterIdOf(req), parseConfigUpdate(req.body)),
  } satisfies EndpointHandlers<"clusters">;
}
