import { subjects, type ApiRequest, type Handler } from "@corral/shared";
import { parseAddServices, parseProviderFieldsBody } from "../domain/requests.js";
import type { ServicesAction } from "../operations/index.js";
import { clusterFor, clusterIdOf, type HandlerDeps } from "./context.js";

export function serviceHandlers(h: HandlerDeps): Record<string, Handler> {
  const s = subjects.clusters;

  /** start/stop/restart of all services, or of `params.service`. */
  const runServices = (action: ServicesAction) => async (req: ApiRequest) => {
    const providerFields = parseProviderFieldsBody(req.body);
    await h.operations.runServices(req.identity, clusterIdOf(req), action, req.params["service"], providerFields);
    return undefined;
  };

  return {
    [s.getServices]: async (req: ApiRequest) => (await clusterFor(h, req)).services,

    [s.startServices]: runServices("start_services"),
    [s.stopServices]: runServices("stop_services"),
    [s.restartServices]: runServices("restart_services"),

    [s.addServices]: async (req: ApiRequest) => {
      await h.operations.addServices(req.identity, clusterIdOf(req), parseAddServices(req.body));
      return undefined;
    },
  };
}
