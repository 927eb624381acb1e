import {
  ConflictError,
  NotFoundError,
  type HostAllocation,
  type Identity,
  type HostView,
  type Provider,
} from "@corral/contracts";
import {
  HOSTPOOL_PROVIDER_TYPE,
  HostListError,
  parseHostEntry,
  parseHostList,
  type EndpointHandlers,
  type HostEntry,
} from "@corral/shared";
import type { CatalogStore } from "../adapters/catalog-store.js";
import type { HostPoolStore } from "../adapters/hostpool-store.js";

export interface HostPoolHandlerDeps {
  catalog: CatalogStore;
  hostPool: HostPoolStore;
}

/** Reads a stored `hosts` field; an entry that cannot be read is the provider's problem, shown as a 409. */
function listedHosts(provider: Provider): HostEntry[] {
  const raw = provider.provisioner["hosts"];
  try {
    return parseHostList(typeof raw === "string" || typeof raw === "number" ? String(raw) : "");
  } catch (err) {
    if (err instanceof HostListError) throw new ConflictError(`provider ${provider.name}: ${err.message}`, { field: "provisioner.hosts" }, "invalid_hosts");
    throw err;
  }
}

/** Allocation fields as stored, without anything else a key may carry. */
const view = (a: HostAllocation): HostView => ({
  host: a.host,
  state: a.state,
  clusterId: a.clusterId,
  nodeId: a.nodeId,
  since: a.since,
  ...(a.reason !== undefined ? { reason: a.reason } : {}),
});

/** The hosts of a `hostpool` provider (tenant admin only, which the gateway checks). */
export function hostPoolHandlers(deps: HostPoolHandlerDeps) {
  const hostpoolProvider = async (req: { identity: Identity; params: { name: string } }): Promise<Provider> => {
    const { name } = req.params;
    const found = (await deps.catalog.get(req.identity.tenant, "providers", name))?.value as Provider | undefined;
    if (found?.providertype !== HOSTPOOL_PROVIDER_TYPE) throw new NotFoundError("hostpool provider", name);
    return found;
  };
  return {
    /** Every listed host in the list's order, then allocations of hosts no longer listed, by host. */
    "tenancy.hostpool.hosts": async (req) => {
      const provider = await hostpoolProvider(req);
      const listed = listedHosts(provider);
      const allocations = new Map((await deps.hostPool.list(req.identity.tenant, provider.name)).map((a) => [a.host, a]));
      const views: HostView[] = listed.map(({ host }) => {
        const a = allocations.get(host);
        allocations.delete(host);
        return a ? view(a) : { host, state: "free" };
      });
      const unlisted = [...allocations.values()].sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
      return [...views, ...unlisted.map(view)];
    },
    "tenancy.hostpool.release": async (req) => {
      const provider = await hostpoolProvider(req);
      const raw = req.params.host;
      let host: string;
      try {
        host = parseHostEntry(raw).host;
      } catch (err) {
        if (err instanceof HostListError) throw new NotFoundError("quarantined host", raw);
        throw err;
      }
      if (!(await deps.hostPool.releaseQuarantined(req.identity.tenant, provider.name, host))) {
        throw new NotFoundError("quarantined host", host);
      }
    },
  } satisfies EndpointHandlers<"tenancy">;
}
