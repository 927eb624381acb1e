import type { CatalogKind } from "./entities.js";

/**
 * Every NATS subject, queue group, stream and KV bucket name Corral uses, in one place.
 * Handlers never build these strings themselves.
 */

const catalogOps = (kind: CatalogKind) =>
  ({
    create: `corral.tenancy.${kind}.create`,
    get: `corral.tenancy.${kind}.get`,
    update: `corral.tenancy.${kind}.update`,
    delete: `corral.tenancy.${kind}.delete`,
    list: `corral.tenancy.${kind}.list`,
  }) as const;

export type CrudSubjects = ReturnType<typeof catalogOps>;

export const subjects = {
  tenancy: {
    tenants: {
      create: "corral.tenancy.tenants.create",
      get: "corral.tenancy.tenants.get",
      update: "corral.tenancy.tenants.update",
      delete: "corral.tenancy.tenants.delete",
      list: "corral.tenancy.tenants.list",
    },
    provisioners: {
      get: "corral.tenancy.provisioners.get",
      list: "corral.tenancy.provisioners.list",
    },
    catalog: {
      providers: catalogOps("providers"),
      hardwaretypes: catalogOps("hardwaretypes"),
      imagetypes: catalogOps("imagetypes"),
      services: catalogOps("services"),
      clustertemplates: catalogOps("clustertemplates"),
    } satisfies Record<CatalogKind, CrudSubjects>,
    export: "corral.tenancy.catalog.export",
    import: "corral.tenancy.catalog.import",
    /** Internal: the whole catalog of a tenant (other services, not the REST API). */
    snapshot: "corral.tenancy.catalog.snapshot",
    /** The hosts of a `hostpool` provider and their allocations; releasing a quarantined host. */
    hostpool: {
      hosts: "corral.tenancy.hostpool.hosts",
      release: "corral.tenancy.hostpool.release",
    },
  },
  clusters: {
    create: "corral.clusters.create",
    list: "corral.clusters.list",
    get: "corral.clusters.get",
    delete: "corral.clusters.delete",
    status: "corral.clusters.status",
    extendLease: "corral.clusters.lease.extend",
    plans: "corral.clusters.plans.list",
    plan: "corral.clusters.plans.get",
    getConfig: "corral.clusters.config.get",
    putConfig: "corral.clusters.config.put",
    getServices: "corral.clusters.services.list",
    addServices: "corral.clusters.services.add",
    startServices: "corral.clusters.services.start",
    stopServices: "corral.clusters.services.stop",
    restartServices: "corral.clusters.services.restart",
    nodeProperties: "corral.clusters.nodeProperties",
    /**
     * Internal (tenant deletion): `{tenant}` removes up to a batch of the tenant's clusters with everything kept
     * for them, then its task queue, results, events and usage; answers `{done}`. Idempotent.
     */
    purgeTenant: "corral.clusters.purgeTenant",
  },
  plugins: {
    listTypes: "corral.plugins.types.list",
    getType: "corral.plugins.types.get",
    upload: "corral.plugins.resources.upload",
    listResources: "corral.plugins.resources.list",
    listVersions: "corral.plugins.resources.versions",
    deleteResource: "corral.plugins.resources.delete",
    deleteVersion: "corral.plugins.resources.deleteVersion",
    stage: "corral.plugins.resources.stage",
    recall: "corral.plugins.resources.recall",
    sync: "corral.plugins.sync",
    /** Internal (tenant bootstrap): `{from, to}` makes `to`'s plugin resources a copy of `from`'s, versions and statuses included. */
    copyTenant: "corral.plugins.copyTenant",
    purgeTenant: "corral.plugins.purgeTenant",
  },
  metrics: {
    queues: "corral.metrics.queues",
    nodeUsage: "corral.metrics.nodes.usage",
    /** Internal (tenant deletion): `{tenant}` removes the tenant's node-usage records. Idempotent. */
    purgeTenant: "corral.metrics.purgeTenant",
  },
  auth: {
    /** Checks a Bearer token: `{token}` -> `{userId, tenant?, roles, expiresAt}` or 401. */
    verify: "corral.auth.verify",
  },
  solver: {
    layout: "corral.solver.layout",
    addServices: "corral.solver.addServices",
    plan: "corral.solver.plan",
    expand: "corral.solver.expand",
  },
} as const;

/** Queue group per service: instances of one service share requests. */
export const queues = {
  tenancy: "corral-tenancy",
  clusters: "corral-clusters",
  solver: "corral-solver",
  plugins: "corral-plugins",
  metrics: "corral-metrics",
  auth: "corral-auth",
} as const;

/** JetStream KV buckets. */
export const buckets = {
  /** tenant name token -> stored tenant record */
  tenants: "corral_tenants",
  /** `<tenant>.<kind>.<name>` tokens -> catalog entity */
  catalog: "corral_catalog",
  /** provisioner id token -> provisioner record */
  provisioners: "corral_provisioners",
  /** `<plugin kind>.<name>` tokens -> plugin specification announced by provisioners */
  pluginTypes: "corral_plugintypes",
  /** tenant name token -> `{clusters, nodes}` live usage, written by the clusters service */
  usage: "corral_usage",
  /** `current` -> WorkerAssignment, written by tenancy's balancer, watched by provisioners */
  assignments: "corral_assignments",
  /** `<tenant>.<plugin kind>.<plugin>.<resource type>.<resource>` tokens -> the resource's versions and version counter */
  pluginResources: "corral_plugin_meta",
  /** tenant name token -> the tenant's live plugin resources, written by sync, watched by provisioners */
  pluginActive: "corral_plugin_active",
  /** signing key id token -> `{secret, createdAtMs}`: HMAC keys of the token server, read by gateways to verify tokens */
  authKeys: "corral_auth_keys",
  /** `<tenant>.<clusterId>` tokens -> the SSH key pair a provider generated for a cluster (read by provisioners) */
  clusterKeys: "corral_cluster_keys",
  /** `<tenant>.<provider>.<host>` tokens -> a `hostpool` host's allocation (absent: the host is free) */
  hostPool: "corral_hostpool",
  /** `id` -> this installation's id (shared/src/installation.ts) */
  installation: "corral_installation",
} as const;

/**
 * Settings of the buckets that differ from `openBucket`'s defaults. Whichever process opens a bucket first
 * creates it, so every opener must ask for the same: `openBucket` applies these itself.
 */
export const bucketSettings: Readonly<Record<string, { history: number }>> = {
  /** Tenant records keep a few revisions. */
  [buckets.tenants]: { history: 5 },
};

/** Object stores. */
export const objectStores = {
  /** Request bodies the gateway streamed in for a service (plugin resource uploads); the service moves or deletes them. */
  uploads: "corral_uploads",
  /** Bytes of every plugin resource version, named in the version's metadata; written by the plugins service. */
  pluginResources: "corral_plugin_resources",
} as const;

export const SUPERADMIN_TENANT = "superadmin";
export const ADMIN_USER = "admin";
