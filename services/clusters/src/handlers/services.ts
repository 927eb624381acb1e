import { addServices } from "@corral/solver";
import { BadRequestError, NotFoundError, subjects, type ApiRequest, type Handler, type Service } from "@corral/shared";
import { nodeIdsOf } from "../domain/ids.js";
import { parseAddServices, parseProviderFieldsBody } from "../domain/requests.js";
import type { ClusterRecord } from "../domain/records.js";
import { checkProviderFields } from "../engine/create-cluster.js";
import type { PlannedAction } from "../engine/engine.js";
import { clusterFor, type HandlerDeps } from "./context.js";

export function serviceHandlers(h: HandlerDeps): Record<string, Handler> {
  const s = subjects.clusters;
  const { deps, engine } = h;

  /** Provider fields of a service operation (each operation brings its own): 400 `{missingFields}` when short. */
  const acceptFields = async (cluster: ClusterRecord, body: unknown) => {
    const fields = parseProviderFieldsBody(body);
    await checkProviderFields(deps, cluster.provider, fields);
    return fields;
  };

  /** start/stop/restart of all services, or of `params.service` (which must be on the cluster: 404). */
  const runServices = (action: PlannedAction) => async (req: ApiRequest) => {
    const cluster = await clusterFor(h, req);
    const service = req.params["service"];
    if (service !== undefined && !cluster.services.includes(service)) {
      throw new NotFoundError(`service ${service} on cluster`, cluster.id);
    }
    const providerFields = await acceptFields(cluster, req.body);
    await engine.startJob(cluster, { action, providerFields, ...(service !== undefined ? { service } : {}) });
    return undefined;
  };

  return {
    [s.getServices]: async (req: ApiRequest) => (await clusterFor(h, req)).services,

    [s.startServices]: runServices("start_services"),
    [s.stopServices]: runServices("stop_services"),
    [s.restartServices]: runServices("restart_services"),

    [s.addServices]: async (req: ApiRequest) => {
      const { services } = parseAddServices(req.body);
      const cluster = await clusterFor(h, req);
      const catalog = await deps.tenancy.catalog(cluster.tenant);
      const compatible = cluster.clusterTemplate.compatibility.services;
      for (const name of services) {
        if (!catalog.services.some((d) => d.name === name)) throw new BadRequestError(`service ${name} does not exist`, { field: "services" });
        if (compatible.length > 0 && !compatible.includes(name)) {
          throw new BadRequestError(`service ${name} is not compatible with template ${cluster.clusterTemplate.name}`, { field: "services" });
        }
        if (cluster.services.includes(name)) {
          throw new BadRequestError(`service ${name} is already on cluster ${cluster.id}`, { field: "services" });
        }
      }
      const defs = new Map<string, Service>(cluster.serviceDefs.map((d) => [d.name, d]));
      for (const name of services) {
        const def = catalog.services.find((d) => d.name === name);
        if (!def) throw new BadRequestError(`service ${name} does not exist`, { field: "services" });
        defs.set(name, def);
      }
      const nodes = await deps.nodes.getMany(cluster.id, nodeIdsOf(cluster.id, cluster.numNodes));
      const result = addServices({
        template: cluster.clusterTemplate,
        catalog: { services: [...defs.values()] },
        nodes: nodes.map((n) => ({
          id: n.id,
          nodenum: n.nodenum,
          services: n.services,
          hardwaretype: String(n.properties["hardwaretype"] ?? ""),
          imagetype: String(n.properties["imagetype"] ?? ""),
        })),
        clusterServices: cluster.services,
        services,
      });
      const providerFields = await acceptFields(cluster, req.body);
      const serviceDefs = result.services.map((name) => defs.get(name)).filter((d): d is Service => d !== undefined);
      await engine.startJob(cluster, {
        action: "add_services",
        addedServices: services,
        nodeServices: Object.fromEntries(result.changedNodes.map((n) => [n.id, n.services])),
        mutate: (c) => ({ ...c, services: result.services, serviceDefs }),
        providerFields,
      });
      return undefined;
    },
  };
}
