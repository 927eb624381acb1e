import type { EndpointHandlers } from "@corral/shared";
import { clusterIdOf, jobOperationsFor, type HandlerDeps } from "./context.js";

export function clusterHandlers(h: HandlerDeps) {
  const { operations, queries } = h;
  return {
    "clusters.create": async (req) => {
      if (req.query.dryRun) return operations.dryRun.create(req.identity, req.body);
      return { id: await operations.create(req.identity, req.body) };
    },

    "clusters.list": async (req) => queries.list(req.identity, req.query.status?.length ? new Set(req.query.status) : undefined),

    "clusters.get": async (req) => queries.details(req.identity, clusterIdOf(req)),

    "clusters.status": async (req) => queries.status(req.identity, clusterIdOf(req)),

    "clusters.delete": async (req) => jobOperationsFor(h, req).delete(req.identity, clusterIdOf(req), req.body?.providerFields ?? {}),

    "clusters.extendLease": async (req) => {
      await operations.extendLease(req.identity, clusterIdOf(req), req.body.expireTime);
    },
  } satisfies EndpointHandlers<"clusters">;
}
