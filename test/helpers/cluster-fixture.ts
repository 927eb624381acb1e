/**
 * A tenant with a small `sim` + `shell` catalog for tests and benchmarks that run clusters end to end, and a few
 * REST calls on clusters. The `sim` and `shell` plugin types must be registered first (start a provisioner).
 */
import { randomUUID } from "node:crypto";
import { api, SUPERADMIN, type Caller } from "./api.js";
import { createCluster as createClusterAs, waitForStatus as waitForStatusAs, type StatusBody } from "./clusters.js";

export interface ClusterCatalogOptions {
  /** Tenant name. @default `crash-<8 hex>` */
  tenant?: string;
  /** The tenant's `workers` (spread over live provisioners by the tenancy balancer). */
  workers: number;
  /** Admin fields of the `sim` provider (`delay_ms`, `delay_create_ms`, ...), as strings. @default {} */
  sim?: Record<string, string>;
  /** Provider type of `sim1` (`sim-secured` needs provisioners that carry it). @default "sim" */
  providerType?: string;
  /**
   * Services of the template, each with shell actions: name -> action -> script. A service listed later requires
   * the ones before it (runtime and install dependencies), so stages follow the list.
   * @default no services (tasks: CREATE, CONFIRM, BOOTSTRAP per node)
   */
  services?: Array<{ name: string; actions: Record<string, string> }>;
  /** The tenant's quotas. */
  maxClusters?: number;
  maxNodes?: number;
}

export interface ClusterCatalog {
  tenant: string;
  admin: Caller;
  /** Name of the template to create clusters from. */
  template: string;
}

/** Creates the tenant and its catalog (provider `sim1`, hardware `small`, image `img`, template `t1`). */
export async function createClusterCatalog(baseUrl: string, options: ClusterCatalogOptions): Promise<ClusterCatalog> {
  const tenant = options.tenant ?? `crash-${randomUUID().slice(0, 8)}`;
  const quotas = {
    ...(options.maxClusters !== undefined ? { maxClusters: options.maxClusters } : {}),
    ...(options.maxNodes !== undefined ? { maxNodes: options.maxNodes } : {}),
  };
  const created = await api(baseUrl, "POST", "/tenants", {
    ...SUPERADMIN,
    body: { tenant: { name: tenant, workers: options.workers, ...quotas } },
  });
  if (created.status !== 200) throw new Error(`creating tenant ${tenant}: HTTP ${created.status} ${created.text}`);
  const admin: Caller = { user: "admin", tenant };
  const services = options.services ?? [];
  const entities: Array<[string, unknown]> = [
    ["/providers", { name: "sim1", providertype: options.providerType ?? "sim", provisioner: { ...options.sim } }],
    ["/hardwaretypes", { name: "small", providermap: { sim1: { flavor: "s1" } } }],
    ["/imagetypes", { name: "img", providermap: { sim1: { image: "i1" } } }],
  ];
  services.forEach((s, i) => {
    const before = services.slice(0, i).map((x) => x.name);
    const actions = Object.fromEntries(Object.entries(s.actions).map(([a, script]) => [a, { type: "shell", fields: { script } }]));
    entities.push([
      "/services",
      {
        name: s.name,
        ...(before.length ? { dependencies: { runtime: { requires: before }, install: { requires: before } } } : {}),
        provisioner: { actions },
      },
    ]);
  });
  const names = services.map((s) => s.name);
  entities.push([
    "/clustertemplates",
    {
      name: "t1",
      compatibility: { services: names, hardwaretypes: ["small"], imagetypes: ["img"] },
      defaults: { services: names, provider: "sim1", hardwaretype: "small", imagetype: "img", config: {} },
    },
  ]);
  for (const [path, body] of entities) {
    const r = await api(baseUrl, "POST", path, { ...admin, body });
    if (r.status !== 200) throw new Error(`POST ${path}: HTTP ${r.status} ${r.text}`);
  }
  return { tenant, admin, template: "t1" };
}

/** `POST /clusters` from the catalog's template; the new cluster's id. */
export function createCluster(
  baseUrl: string,
  catalog: ClusterCatalog,
  numMachines: number,
  name = `c${randomUUID().slice(0, 6)}`,
): Promise<string> {
  return createClusterAs(baseUrl, catalog.admin, { name, clusterTemplate: catalog.template, numMachines });
}

/** Waits until the cluster settles as `status` (as the catalog's admin); fails when it settles as another. */
export function waitForStatus(
  baseUrl: string,
  catalog: ClusterCatalog,
  id: string,
  status: "active" | "terminated",
  timeoutMs: number,
): Promise<StatusBody> {
  return waitForStatusAs(baseUrl, catalog.admin, id, status, timeoutMs);
}
