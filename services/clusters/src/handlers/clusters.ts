import type { EndpointHandlers } from "@corral/shared";
import { parseCreateCluster, parseDryRun, parseLeaseExtension, parseProviderFieldsBody, parseStatusFilter } from "../domain/requests.js";
import { clusterIdOf, jobOperationsFor, type HandlerDeps } from "./context.js";

export function clusterHandlers(h: HandlerDeps) {
  const { operations, queries } = h;
  return {
    "clusters.create": async (req) => {
      const body = parseCreateCluster(req.body);
      if (parseDryRun(req.query)) return operations.dryRun.create(req.identity, body);
      return { id: await operations.create(req.identity, body) };
    },

    "clusters.list": async (req) => queries.list(req.identity, parseStatusFilter(req.query["status"])),

    "clusters.get": async (req) => queries.details(req.identity, clusterIdOf(req)),

    "clusters.status": async (req) => queries.status(req.identity, clusterIdOf(req)),

    "clusters.delete": async (req) => jobOperationsFor(h, req).delete(req.identity, clusterIdOf(req), parseProviderFieldsBody(req.body)),

    "clusters.extendLease": async (req) => {
      const { expireTime } = parseLeaseExtension(req.body);
      await operations.extendLease(req.identity, clusterIdOf(req), expireTime);
    },
  } satisfies EndpointHandlers<"clusters">;
}
