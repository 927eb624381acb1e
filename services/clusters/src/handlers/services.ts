import type { EndpointHandler, EndpointHandlers } from "@corral/shared";
import type { ServicesAction } from "../operations/index.js";
import { clusterIdOf, jobOperationsFor, type HandlerDeps } from "./context.js";

export function serviceHandlers(h: HandlerDeps) {

  /** start/stop of all services, or of `params.service`. */
  const runServices =
    (action: ServicesAction): EndpointHandler<"clusters.startServices" | "clusters.stopServices"> =>
    async (req) =>
      jobOperationsFor(h, req).runServices(req.identity, clusterIdOf(req), action, req.params.service, req.body?.providerFields ?? {});

  return {
    "clusters.getServices": async (req) => h.queries.services(req.identity, clusterIdOf(req)),

    "clusters.startServices": runServices("start_services"),
    "clusters.stopServices": runServices("stop_services"),
    "clusters.restartServices": async (req) =>
      jobOperationsFor(h, req).runServices(
        req.identity,
        clusterIdOf(req),
        "restart_services",
        req.params.service,
        req.body?.providerFields ?? {},
        req.body?.rolling,
      ),

    "clusters.addServices": async (req) => {
      const { services, providerFields = {} } = req.body;
      return jobOperationsFor(h, req).addServices(req.identity, clusterIdOf(req), { services, providerFields });
    },
  } satisfies EndpointHandlers<"clusters">;
}
