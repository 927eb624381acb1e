import type { ApiRequest } from "@corral/contracts";
import type { EndpointHandlers } from "@corral/shared";
import { parseAddServices, parseProviderFieldsBody } from "../domain/requests.js";
import type { ServicesAction } from "../operations/index.js";
import { clusterIdOf, jobOperationsFor, type HandlerDeps } from "./context.js";

export function serviceHandlers(h: HandlerDeps) {

  /** start/stop/restart of all services, or of `params.service`. */
  const runServices = (action: ServicesAction) => async (req: ApiRequest) => {
    const providerFields = parseProviderFieldsBody(req.body);
    return jobOperationsFor(h, req).runServices(req.identity, clusterIdOf(req), action, req.params["service"], providerFields);
  };

  return {
    "clusters.getServices": async (req) => h.queries.services(req.identity, clusterIdOf(req)),

    "clusters.startServices": runServices("start_services"),
    "clusters.stopServices": runServices("stop_services"),
    "clusters.restartServices": runServices("restart_services"),

    "clusters.addServices": async (req) => jobOperationsFor(h, req).addServices(req.identity, clusterIdOf(req), parseAddServices(req.body)),
  } satisfies EndpointHandlers<"clusters">;
}
