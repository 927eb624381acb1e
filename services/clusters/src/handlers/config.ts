import { validateMacros } from "@corral/solver";
import { subjects, type ApiRequest, type Handler, type Json } from "@corral/shared";
import { parseConfigUpdate } from "../domain/requests.js";
import { checkProviderFields } from "../engine/create-cluster.js";
import { clusterFor, type HandlerDeps } from "./context.js";

export function configHandlers(h: HandlerDeps): Record<string, Handler> {
  const s = subjects.clusters;
  const { deps, engine } = h;
  return {
    [s.getConfig]: async (req: ApiRequest) => (await clusterFor(h, req)).config,
    [s.putConfig]: async (req: ApiRequest) => {
      const { config, restart, providerFields } = parseConfigUpdate(req.body);
      validateMacros(config as Json);
      const cluster = await clusterFor(h, req);
      await checkProviderFields(deps, cluster.provider, providerFields);
      await engine.startJob(cluster, {
        action: restart ? "cluster_configure_with_restart" : "cluster_configure",
        mutate: (c) => ({ ...c, config }),
        providerFields,
      });
      return undefined;
    },
  };
}
