import { buckets, healthReportFilter, liveClusterEventsFilter, objectStores, streams, type EndpointName, type ServiceName, type StreamName } from "@corral/contracts";

/** The eight services, each of which logs in to NATS as a user of its own (bus-permissions.ts). */
export const CORRAL_SERVICES = ["gateway", "tenancy", "clusters", "solver", "plugins", "metrics", "auth", "webhooks"] as const satisfies readonly ServiceName[];
export type CorralService = (typeof CORRAL_SERVICES)[number];

export const isCorralService = (name: string): name is CorralService => (CORRAL_SERVICES as readonly string[]).includes(name);

/** A record of something per service. */
export function mapServices<T>(value: (service: CorralService) => T): Record<CorralService, T> {
  return Object.fromEntries(CORRAL_SERVICES.map((s) => [s, value(s)])) as Record<CorralService, T>;
}

type Bucket = (typeof buckets)[keyof typeof buckets];
type ObjectStoreName = (typeof objectStores)[keyof typeof objectStores];

/**
 * What a process does with a stream: `info` (only that), `read` (info, direct gets, ordered consumers), `publish` (to its subjects),
 * `consume` (durable pull consumers: create, pull, ack, delete), `inspect` (consumer info and lists), `purge`
 * (by subject, tenant deletion), `deleteMessages` (single messages).
 */
export type StreamUse = "info" | "read" | "publish" | "consume" | "inspect" | "purge" | "deleteMessages";

/**
 * What one service does on the bus besides answering its own endpoints (those come from the endpoint table) and
 * listening to its own replies. Writing a bucket or store includes reading it. Nobody creates or updates a stream:
 * the launcher (`prepareBus`) creates every stream, bucket and store before the services connect.
 */
export interface BusAccess {
  /** Endpoints of the table it calls (`callEndpoint`); `"rest"`: every endpoint with REST routes (the gateway's router). */
  calls: readonly EndpointName[] | "rest";
  kv: { read: readonly Bucket[]; write: readonly Bucket[] };
  objects: { read: readonly ObjectStoreName[]; write: readonly ObjectStoreName[] };
  streams: Partial<Record<StreamName, readonly StreamUse[]>>;
  /** Core subjects it subscribes to besides its endpoints and replies. */
  listens: readonly string[];
}

const none = { read: [], write: [] } as const;

/**
 * Found by reading each service's sources (services/<name>/src and the shared readers it opens): which
 * `callEndpoint` names it uses, which `openBucket`/`Objm` stores it opens and writes, and what it does with the
 * streams. deploy/test/service-access.test.ts checks the `callEndpoint` names against the sources.
 */
export const SERVICE_ACCESS: Readonly<Record<CorralService, BusAccess>> = {
  gateway: {
    calls: "rest",
    // Tenant uids for bound tokens (tenant directory); the signing keys to check tokens without a round trip.
    kv: { read: [buckets.tenants, buckets.authKeys], write: [] },
    objects: { read: [], write: [objectStores.uploads] },
    // Past events by direct get; live ones on the republished core subjects. Audit entries of requests, published.
    streams: { [streams.events]: ["read"], [streams.audit]: ["publish"] },
    listens: [liveClusterEventsFilter],
  },
  tenancy: {
    calls: ["clusters.purgeTenant", "plugins.purgeTenant", "plugins.copyTenant", "metrics.purgeTenant", "webhooks.purgeTenant"],
    kv: {
      read: [buckets.usage, buckets.pluginTypes],
      write: [buckets.tenants, buckets.catalog, buckets.provisioners, buckets.assignments, buckets.hostPool],
    },
    objects: none,
    streams: {},
    listens: [],
  },
  clusters: {
    calls: ["tenancy.snapshot", "solver.layout", "solver.addServices", "solver.grow", "solver.plan"],
    kv: {
      read: [buckets.tenants, buckets.pluginTypes],
      write: [
        buckets.clusters,
        buckets.nodes,
        buckets.plans,
        buckets.planTasks,
        buckets.counters,
        buckets.credentials,
        buckets.usage,
        buckets.clusterKeys,
      ],
    },
    objects: none,
    streams: {
      // Tenant deletion drops a tenant's task consumer and purges its messages from all three.
      [streams.tasks]: ["read", "publish", "consume", "purge"],
      // Results are consumed durably; one that showed secrets is deleted once applied.
      [streams.results]: ["read", "consume", "purge", "deleteMessages"],
      [streams.events]: ["read", "publish", "purge"],
      // Tenant deletion purges the tenant's audit entries with the rest.
      [streams.audit]: ["info", "purge"],
    },
    // Provisioners' node health reports (queue group of the service).
    listens: [healthReportFilter],
  },
  solver: { calls: [], kv: none, objects: none, streams: {}, listens: [] },
  plugins: {
    calls: ["plugins.purgeTenant"],
    kv: { read: [buckets.tenants, buckets.pluginTypes], write: [buckets.pluginResources, buckets.pluginActive] },
    // Uploads are moved into the resources store and deleted.
    objects: { read: [], write: [objectStores.uploads, objectStores.pluginResources] },
    streams: {},
    listens: [],
  },
  metrics: {
    calls: [],
    kv: { read: [buckets.tenants], write: [] },
    objects: none,
    // Node events through its durable consumer; queue depths from the task stream's consumers.
    // ensureStreams at start looks up all three streams.
    // GET /audit reads the audit stream by direct gets; plans' ends (a durable consumer) are recorded in it.
    streams: {
      [streams.events]: ["read", "consume"],
      [streams.tasks]: ["read", "inspect"],
      [streams.results]: ["info"],
      [streams.audit]: ["read", "publish"],
    },
    listens: [],
  },
  auth: {
    calls: [],
    kv: { read: [buckets.tenants], write: [buckets.authKeys] },
    objects: none,
    // Audit entries of logins and revocations, published.
    streams: { [streams.audit]: ["publish"] },
    listens: [],
  },
  webhooks: {
    calls: [],
    kv: { read: [], write: [buckets.webhooks, buckets.webhookDeliveries] },
    objects: none,
    // Cluster events and audit entries through its durable consumers (created at start).
    streams: { [streams.events]: ["read", "consume"], [streams.audit]: ["read", "consume"] },
    listens: [],
  },
};
