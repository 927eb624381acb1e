import { subjects, type ApiRequest, type Handler } from "@corral/shared";
import { parseConfigUpdate } from "../domain/requests.js";
import { clusterFor, clusterIdOf, type HandlerDeps } from "./context.js";

export function configHandlers(h: HandlerDeps): Record<string, Handler> {
  const s = subjects.clusters;
  return {
    [s.getConfig]: async (req: ApiRequest) => (await clusterFor(h, req)).config,
    [s.putConfig]: async (req: ApiRequest) => {
      await h.operations.configure(req.identity, clusterIdOf(req), parseConfigUpdate(req.body));
      return undefined;
    },
  };
}
