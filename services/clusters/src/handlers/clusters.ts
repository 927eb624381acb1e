import { BadRequestError, ConflictError, seesSecrets, subjects, type ApiRequest, type Handler } from "@corral/shared";
import { CLUSTER_STATUSES, type ClusterStatus } from "../domain/cluster-machine.js";
import { nodeIdsOf } from "../domain/ids.js";
import { checkLeaseExtension } from "../domain/lease.js";
import { parseCreateCluster, parseLeaseExtension, parseProviderFieldsBody } from "../domain/requests.js";
import { withoutProviderSecrets } from "../domain/secrets.js";
import { clusterDetails, clusterStatus, clusterSummary } from "../domain/views.js";
import { checkProviderFields, createCluster } from "../engine/create-cluster.js";
import { statusOf } from "../engine/engine.js";
import { clusterFor, liveProgress, type HandlerDeps } from "./context.js";

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
  const { deps, engine } = h;
  return {
    [s.create]: async (req: ApiRequest) => ({ id: await createCluster(deps, engine, req.identity, parseCreateCluster(req.body)) }),

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
      const fields = parseProviderFieldsBody(req.body);
      const cluster = await clusterFor(h, req);
      await checkProviderFields(deps, cluster.provider, fields);
      await engine.startJob(cluster, { action: "cluster_delete", providerFields: fields });
      return undefined;
    },

    [s.extendLease]: async (req: ApiRequest) => {
      const { expireTime } = parseLeaseExtension(req.body);
      const cluster = await clusterFor(h, req);
      await deps.clusters.modify(cluster.id, (current) => {
        if (!current) return { keep: true };
        const status = statusOf(current.value);
        if (status === "pending" || status === "terminated") {
          throw new ConflictError(`cluster ${cluster.id} is ${status}; its lease cannot be extended now`, { status });
        }
        checkLeaseExtension(current.value.clusterTemplate, current.value, expireTime, deps.now());
        return { put: { ...current.value, expireTime } };
      });
      return undefined;
    },
  };
}
