import { BadRequestError, CLUSTER_STATUSES, seesSecrets, type ClusterStatus } from "@corral/contracts";
import type { EndpointHandlers } from "@corral/shared";
import { statusOf } from "../domain/cluster-status.js";
import { nodeIdsOf } from "../domain/ids.js";
import { parseCreateCluster, parseDryRun, parseLeaseExtension, parseProviderFieldsBody } from "../domain/requests.js";
import { withoutProviderSecrets } from "../domain/secrets.js";
import { clusterDetails, clusterStatus, clusterSummary } from "../domain/views.js";
import { clusterFor, clusterIdOf, jobOperationsFor, liveProgress, type HandlerDeps } from "./context.js";

function parseStatusFilter(raw: string | undefined): Set<ClusterStatus> | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const wanted = raw.split(",").map((s) => s.trim().toLowerCase()).filter(Boolean);
  for (const s of wanted) {
    if (!CLUSTER_STATUSES.includes(s as ClusterStatus)) {
      throw new BadRequestError(`status ${s} is not one of ${CLUSTER_STATUSES.join(", ")}`, { field: "status" });
    }
  }
  return new Set(wanted as ClusterStatus[]);
}

export function clusterHandlers(h: HandlerDeps) {
  const { deps, operations } = h;
  return {
    "clusters.create": async (req) => {
      const body = parseCreateCluster(req.body);
      if (parseDryRun(req.query)) return operations.dryRun.create(req.identity, body);
      return { id: await operations.create(req.identity, body) };
    },

    "clusters.list": async (req) => {
      const filter = parseStatusFilter(req.query["status"]);
      const { tenant, userId, role } = req.identity;
      const visible = (await deps.clusters.all()).filter(
        (c) => c.tenant === tenant && (role !== "user" || c.ownerId === userId) && (!filter || filter.has(statusOf(c))),
      );
      visible.sort((a, b) => b.createTime - a.createTime || (a.id < b.id ? 1 : -1));
      return Promise.all(visible.map(async (c) => clusterSummary(c, await liveProgress(h, c))));
    },

    "clusters.get": async (req) => {
      const cluster = await clusterFor(h, req);
      const nodes = await deps.nodes.getMany(cluster.id, nodeIdsOf(cluster.id, cluster.numNodes));
      const shown = seesSecrets(req.identity)
        ? { cluster, nodes }
        : withoutProviderSecrets(cluster, nodes, await deps.tenancy.providerType(cluster.provider.providertype));
      return clusterDetails(shown.cluster, shown.nodes, await liveProgress(h, cluster));
    },

    "clusters.status": async (req) => {
      const cluster = await clusterFor(h, req);
      return clusterStatus(cluster, await liveProgress(h, cluster));
    },

    "clusters.delete": async (req) => jobOperationsFor(h, req).delete(req.identity, clusterIdOf(req), parseProviderFieldsBody(req.body)),

    "clusters.extendLease": async (req) => {
      const { expireTime } = parseLeaseExtension(req.body);
      await operations.extendLease(req.identity, clusterIdOf(req), expireTime);
    },
  } satisfies EndpointHandlers<"clusters">;
}
