import { BadRequestError, CLUSTER_STATUSES, seesSecrets, subjects, type ApiRequest, type ClusterStatus, type Handler } from "@corral/shared";
import { statusOf } from "../domain/cluster-status.js";
import { nodeIdsOf } from "../domain/ids.js";
import { parseCreateCluster, parseLeaseExtension, parseProviderFieldsBody } from "../domain/requests.js";
import { withoutProviderSecrets } from "../domain/secrets.js";
import { clusterDetails, clusterStatus, clusterSummary } from "../domain/views.js";
import { clusterFor, clusterIdOf, liveProgress, type HandlerDeps } from "./context.js";

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

export function clusterHandlers(h: HandlerDeps): Record<string, Handler> {
  const s = subjects.clusters;
  const { deps, operations } = h;
  return {
    [s.create]: async (req: ApiRequest) => ({ id: await operations.create(req.identity, parseCreateCluster(req.body)) }),

    [s.list]: async (req: ApiRequest) => {
      const filter = parseStatusFilter(req.query["status"]);
      const { tenant, userId, role } = req.identity;
      const visible = (await deps.clusters.all()).filter(
        (c) => c.tenant === tenant && (role !== "user" || c.ownerId === userId) && (!filter || filter.has(statusOf(c))),
      );
      visible.sort((a, b) => b.createTime - a.createTime || (a.id < b.id ? 1 : -1));
      return Promise.all(visible.map(async (c) => clusterSummary(c, await liveProgress(h, c))));
    },

    [s.get]: async (req: ApiRequest) => {
      const cluster = await clusterFor(h, req);
      const nodes = await deps.nodes.getMany(cluster.id, nodeIdsOf(cluster.id, cluster.numNodes));
      const shown = seesSecrets(req.identity)
        ? { cluster, nodes }
        : withoutProviderSecrets(cluster, nodes, await deps.tenancy.providerType(cluster.provider.providertype));
      return clusterDetails(shown.cluster, shown.nodes, await liveProgress(h, cluster));
    },

    [s.status]: async (req: ApiRequest) => {
      const cluster = await clusterFor(h, req);
      return clusterStatus(cluster, await liveProgress(h, cluster));
    },

    [s.delete]: async (req: ApiRequest) => {
      await operations.delete(req.identity, clusterIdOf(req), parseProviderFieldsBody(req.body));
      return undefined;
    },

    [s.extendLease]: async (req: ApiRequest) => {
      const { expireTime } = parseLeaseExtension(req.body);
      await operations.extendLease(req.identity, clusterIdOf(req), expireTime);
      return undefined;
    },
  };
}
