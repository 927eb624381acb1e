import type { ClusterEventType } from "./cluster-events.js";
import type { CatalogKind } from "./entities.js";
import { fromKeyToken, keyToken } from "./kv-keys.js";
import { HEALTH_TARGET_MAX_AGE_MS } from "./node-health.js";

/**
 * Every NATS subject, queue group, stream, consumer, KV bucket and object store name Corral uses, in one place.
 * Nothing else builds these strings.
 */

/**
 * The subject of endpoint `name` (a key of the endpoint table): `corral.<name>`. Every service subject below is
 * written so, and the table checks it of every row when it loads (table.ts).
 */
export const endpointSubject = <N extends string>(name: N): `corral.${N}` => `corral.${name}`;

const catalogOps = <K extends CatalogKind>(kind: K) =>
  ({
    create: endpointSubject(`tenancy.catalog.${kind}.create`),
    get: endpointSubject(`tenancy.catalog.${kind}.get`),
    update: endpointSubject(`tenancy.catalog.${kind}.update`),
    delete: endpointSubject(`tenancy.catalog.${kind}.delete`),
    list: endpointSubject(`tenancy.catalog.${kind}.list`),
  }) as const;

export type CrudSubjects = ReturnType<typeof catalogOps>;

/** The subject of each endpoint, by the endpoint's name: `subjects.clusters.create` is endpoint `clusters.create`'s. */
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
    },
    export: "corral.tenancy.export",
    import: "corral.tenancy.import",
    /** Internal: the whole catalog of a tenant (other services, not the REST API). */
    snapshot: "corral.tenancy.snapshot",
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
    extendLease: "corral.clusters.extendLease",
    plans: "corral.clusters.plans",
    plan: "corral.clusters.plan",
    getConfig: "corral.clusters.getConfig",
    putConfig: "corral.clusters.putConfig",
    getServices: "corral.clusters.getServices",
    addServices: "corral.clusters.addServices",
    addNodes: "corral.clusters.addNodes",
    removeNode: "corral.clusters.removeNode",
    removeNodes: "corral.clusters.removeNodes",
    replaceNode: "corral.clusters.replaceNode",
    startServices: "corral.clusters.startServices",
    stopServices: "corral.clusters.stopServices",
    restartServices: "corral.clusters.restartServices",
    nodeProperties: "corral.clusters.nodeProperties",
    /**
     * Internal (tenant deletion): `{tenant}` removes up to a batch of the tenant's clusters with everything kept
     * for them, then its task queue, results, events and usage; answers `{done}`. Idempotent.
     */
    purgeTenant: "corral.clusters.purgeTenant",
  },
  plugins: {
    listTypes: "corral.plugins.listTypes",
    getType: "corral.plugins.getType",
    upload: "corral.plugins.upload",
    listResources: "corral.plugins.listResources",
    listVersions: "corral.plugins.listVersions",
    deleteResource: "corral.plugins.deleteResource",
    deleteVersion: "corral.plugins.deleteVersion",
    stage: "corral.plugins.stage",
    recall: "corral.plugins.recall",
    sync: "corral.plugins.sync",
    /** Internal (tenant bootstrap): `{from, to}` makes `to`'s plugin resources a copy of `from`'s, versions and statuses included. */
    copyTenant: "corral.plugins.copyTenant",
    purgeTenant: "corral.plugins.purgeTenant",
  },
  metrics: {
    queues: "corral.metrics.queues",
    nodeUsage: "corral.metrics.nodeUsage",
    /** `GET /audit`: audit entries of the caller's tenant (all for the superadmin), newest first. */
    audit: "corral.metrics.audit",
    /** Internal (tenant deletion): `{tenant}` removes the tenant's node-usage records. Idempotent. */
    purgeTenant: "corral.metrics.purgeTenant",
  },
  auth: {
    /** Checks a Bearer token: `{token}` -> `{userId, tenant?, roles, expiresAt}` or 401. */
    verify: "corral.auth.verify",
  },
  webhooks: {
    create: "corral.webhooks.create",
    list: "corral.webhooks.list",
    get: "corral.webhooks.get",
    update: "corral.webhooks.update",
    delete: "corral.webhooks.delete",
    deliveries: "corral.webhooks.deliveries",
    test: "corral.webhooks.test",
    /** Internal (tenant deletion): `{tenant}` removes the tenant's webhook endpoints and their deliveries. Idempotent. */
    purgeTenant: "corral.webhooks.purgeTenant",
  },
  solver: {
    layout: "corral.solver.layout",
    addServices: "corral.solver.addServices",
    grow: "corral.solver.grow",
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
  webhooks: "corral-webhooks",
} as const;

/**
 * JetStream KV buckets. Each is written by one owner (named on each); other services read it only through a
 * reader the owner exports, or through the documented provisioner protocol (contracts/src/provisioners.ts,
 * shared/src/hostpool.ts, tasks.ts). Key layouts: docs/architecture.md, State in JetStream.
 */
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
  /** cluster id token -> cluster record, written by the clusters service (provisioners read its status) */
  clusters: "corral_clusters",
  /**
   * `<clusterId>.nodes` -> the node group of a cluster of up to 64 nodes (`{moved: true}` once its nodes have keys
   * of their own), `<clusterId>.<nodeId>` -> one node record; written by the clusters service
   */
  nodes: "corral_nodes",
  /** `<clusterId>.<planId>` tokens -> plan record, written by the clusters service */
  plans: "corral_plans",
  /** `<clusterId>.<planId>.<stage>.<page>` tokens -> a page of a stage's tasks, written by the clusters service */
  planTasks: "corral_plan_tasks",
  /** counter name -> id blocks and per-cluster job counters, written by the clusters service */
  counters: "corral_counters",
  /** `<clusterId>.<planId>` tokens -> a request's provider fields while its plan runs, written by the clusters service */
  credentials: "corral_credentials",
  /**
   * `<tenant>.<clusterId>.<nodeId>` tokens -> the `HealthTarget` of a node whose provider checks it, written by the
   * provisioner that ran its CREATE, CONFIRM or DELETE, read by the one checking the tenant (node-health.ts)
   */
  healthTargets: "corral_health_targets",
  /** `<tenant>.<id>` tokens -> a webhook endpoint (contracts/src/webhooks.ts), written by the webhooks service */
  webhooks: "corral_webhooks",
  /** `<tenant>.<webhook id>.<delivery id>` tokens -> one delivery's state, written by the webhooks service */
  webhookDeliveries: "corral_webhook_deliveries",
} as const;

/**
 * Settings of the buckets that differ from `openBucket`'s defaults. Whichever process opens a bucket first
 * creates it, so every opener must ask for the same: `openBucket` applies these itself.
 */
export const bucketSettings: Readonly<Record<string, { history: number; ttl?: number }>> = {
  /** Tenant records keep a few revisions. */
  [buckets.tenants]: { history: 5 },
  /** So do cluster records. */
  [buckets.clusters]: { history: 5 },
  /** Health targets expire unless written again (those of tenants nobody checks any more go by themselves). */
  [buckets.healthTargets]: { history: 1, ttl: HEALTH_TARGET_MAX_AGE_MS },
  /** A delivery's state is kept a week after its last change (the delivery list shows recent ones). */
  [buckets.webhookDeliveries]: { history: 1, ttl: 7 * 24 * 3600 * 1000 },
};

/** The stream behind a KV bucket and the prefix of its subjects (nats.js's layout, NATS ADR-8). */
export const kvStream = (bucket: string) => `KV_${bucket}`;
export const kvSubjectPrefix = (bucket: string) => `$KV.${bucket}.`;

/** Object stores. */
export const objectStores = {
  /** Request bodies the gateway streamed in for a service (plugin resource uploads); the service moves or deletes them. */
  uploads: "corral_uploads",
  /** Bytes of every plugin resource version, named in the version's metadata; written by the plugins service. */
  pluginResources: "corral_plugin_resources",
} as const;

/** The stream behind an object store and the subject of one object's chunks (NATS ADR-20). */
export const objectStoreStream = (store: string) => `OBJ_${store}`;
export const objectChunksSubject = (store: string, nuid: string) => `$O.${store}.C.${nuid}`;

/** JetStream streams of the task protocol (shared/src/tasks.ts). */
export const streams = {
  tasks: "CORRAL_TASKS",
  results: "CORRAL_RESULTS",
  events: "CORRAL_EVENTS",
  /** Audit entries (audit.ts): who changed or was refused what, kept for `audit.maxAgeDays` and `audit.maxBytes`. */
  audit: "CORRAL_AUDIT",
} as const;
export type StreamName = (typeof streams)[keyof typeof streams];

/** What each stream takes. */
export const streamSubjects: Readonly<Record<StreamName, string>> = {
  [streams.tasks]: "corral.tasks.>",
  [streams.results]: "corral.results.>",
  [streams.events]: "corral.events.>",
  [streams.audit]: "corral.audit.>",
};

/** A tenant's tasks, one work queue per tenant. */
export const taskSubject = (tenant: string) => `corral.tasks.${keyToken(tenant)}`;
/** One dispatch's result: looked up by subject to tell whether the dispatch already ran. */
export const resultSubject = (tenant: string, taskId: string, dispatch: number) =>
  `corral.results.${keyToken(tenant)}.${keyToken(taskId)}.${dispatch}`;
/**
 * Results of several dispatches of one plan published together by a provisioner (`{results: [...]}`): looked up by
 * scanning the plan's batches to tell whether a dispatch already ran.
 */
export const resultBatchSubject = (tenant: string, planId: string) => `corral.results.${keyToken(tenant)}.${keyToken(planId)}.batch`;
/** An event of a tenant; `kind` is dotted (`node.created`). */
export const eventSubject = (tenant: string, kind: string) => `corral.events.${keyToken(tenant)}.${kind}`;
/** Events matching `kind` (may hold wildcards: `node.*`) of any tenant. */
export const eventFilter = (kind: string) => `corral.events.*.${kind}`;
/** An event of one cluster (cluster-events.ts): `corral.events.<tenant>.cluster.<clusterId>.<type>`. */
export const clusterEventSubject = (tenant: string, clusterId: string, type: ClusterEventType) =>
  `corral.events.${keyToken(tenant)}.cluster.${keyToken(clusterId)}.${type}`;
/** Every event of one cluster. */
export const clusterEventFilter = (tenant: string, clusterId: string) => `corral.events.${keyToken(tenant)}.cluster.${keyToken(clusterId)}.>`;
/** Every cluster event of a tenant. */
export const tenantClusterEventFilter = (tenant: string) => `corral.events.${keyToken(tenant)}.cluster.>`;
/**
 * The events stream republishes each event once stored (nats-server adds the `Nats-Sequence` header) from
 * `src` to `dest`: gateways follow live events with one core subscription, no consumer.
 */
export const eventsRepublish = { src: "corral.events.>", dest: "corral.live.events.>" } as const;
/** The republished cluster events of every tenant. */
export const liveClusterEventsFilter = "corral.live.events.*.cluster.>";
/** Tenant and cluster of a republished cluster event's subject; undefined for any other subject. */
export function liveClusterEventOf(subject: string): { tenant: string; clusterId: string } | undefined {
  const tokens = subject.split(".");
  if (tokens.length < 7 || tokens[0] !== "corral" || tokens[1] !== "live" || tokens[4] !== "cluster") return undefined;
  return { tenant: fromKeyToken(tokens[3]!), clusterId: fromKeyToken(tokens[5]!) };
}
/** Node health reports of a tenant's nodes, published by the provisioner checking them (node-health.ts). */
export const healthReportSubject = (tenant: string) => `corral.health.reports.${keyToken(tenant)}`;
/** The health reports of every tenant: the clusters service's instances share them (queue group `queues.clusters`). */
export const healthReportFilter = "corral.health.reports.*";
/** The tenant of a health report's subject; undefined for any other subject. */
export function healthReportTenantOf(subject: string): string | undefined {
  const tokens = subject.split(".");
  if (tokens.length !== 4 || tokens[0] !== "corral" || tokens[1] !== "health" || tokens[2] !== "reports") return undefined;
  return fromKeyToken(tokens[3]!);
}
/** On-demand checks of a tenant's nodes (`HealthCheckRequest`), answered by the provisioner checking the tenant. */
export const healthCheckSubject = (tenant: string) => `corral.health.check.${keyToken(tenant)}`;
/** On-demand checks of every tenant (what a provisioner may listen to). */
export const healthCheckFilter = "corral.health.check.*";

/** The audit entries of requests a tenant's users made (`_` for requests of no known tenant: a refused token). */
export const auditSubject = (tenant: string | undefined) => `corral.audit.${tenant ? keyToken(tenant) : "_"}`;

/** Subject filters of everything one tenant has in the streams (its audit entries go with it). */
export const tenantStreamFilters = (tenant: string): Record<StreamName, string> => ({
  [streams.tasks]: taskSubject(tenant),
  [streams.results]: `corral.results.${keyToken(tenant)}.>`,
  [streams.events]: eventSubject(tenant, ">"),
  [streams.audit]: auditSubject(tenant),
});

/** Durable consumers. */
export const consumers = {
  /** On `streams.results`: the clusters service's instances share it. */
  results: "clusters",
  /** On `streams.events`, node events: the metrics service's instances share it. */
  nodeEvents: "metrics-node-usage",
  /** On `streams.events`, plans' ends: the metrics service's instances share it and record them in the audit stream. */
  planEnds: "metrics-audit-plan-ends",
  /** On `streams.events`, cluster events: the webhooks service's instances share it and queue deliveries of them. */
  webhookEvents: "webhooks-cluster-events",
  /** On `streams.audit`: the webhooks service's instances share it and queue deliveries of tenants' audit entries. */
  webhookAudit: "webhooks-audit",
} as const;
/** On `streams.tasks`: the one a tenant's workers share. */
export const taskConsumerName = (tenant: string) => `tasks-${keyToken(tenant)}`;

/**
 * First token of the reply subjects of one kind of process (`gateway` -> `_INBOX_GATEWAY`): each service's and the
 * provisioners' NATS user may listen to its own replies only, never to another's.
 */
export const inboxPrefixOf = (process: string) => `_INBOX_${process.toUpperCase()}`;
/** First token of the provisioners' reply subjects (their NATS user may listen to nothing else). */
export const PROVISIONER_INBOX_PREFIX = inboxPrefixOf("provisioner");

export const SUPERADMIN_TENANT = "superadmin";
export const ADMIN_USER = "admin";
