import type { EndpointHandlers } from "@corral/shared";
import { clusterIdOf, jobOperationsFor, type HandlerDeps } from "./context.js";

export function configHandlers(h: HandlerDeps) {
  return {
    "clusters.getConfig": async (req) => h.queries.config(req.identity, clusterIdOf(req)),
    "clusters.putConfig": async (req) => {
      const { config, restart = true, providerFields = {} } = req.body;
      return jobOperationsFor(h, req).configure(req.identity, clusterIdOf(req), { config, restart, providerFields });
    },
  } satisfies EndpointHandlers<"clusters">;
}
