import type { EndpointHandlers } from "@corral/shared";
import { clusterIdOf, jobOperationsFor, type HandlerDeps } from "./context.js";

export function configHandlers(h: HandlerDeps) {
  return {
    "clusters.getConfig": async (req) => h.queries.config(req.identity, clusterIdOf(req)),
    "clusters.putConfig": async (req) => {
      const { config, restart = true, rolling, providerFields = {} } = req.body;
      return jobOperationsFor(h, req).configure(req.identity, clusterIdOf(req), {
        config,
        restart,
        providerFields,
        ...(rolling !== undefined ? { rolling } : {}),
      });
    },
  } satisfies EndpointHandlers<"clusters">;
}
