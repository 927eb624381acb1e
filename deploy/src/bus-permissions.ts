import {
  buckets,
  endpointList,
  healthCheckFilter,
  healthReportFilter,
  endpoints,
  inboxPrefixOf,
  kvStream,
  kvSubjectPrefix,
  objectStores,
  objectStoreStream,
  PROVISIONER_INBOX_PREFIX,
  streams,
  streamSubjects,
  type Endpoint,
  type StreamName,
} from "@corral/contracts";
import { CORRAL_SERVICES, SERVICE_ACCESS, type CorralService, type StreamUse } from "./service-access.js";
import type { BusCredentials } from "./bus-credentials.js";
import type { NatsUser } from "./servers.js";

/**
 * What the provisioner NATS user may do, found by reading provisioner/src: it registers and heartbeats
 * (`corral_provisioners`, `corral_plugintypes`), watches its worker assignment (`corral_assignments`) and the
 * tenants' live plugin resources (`corral_plugin_active`, object store `corral_plugin_resources`), pulls tasks
 * (`CORRAL_TASKS`, one durable consumer per tenant), publishes results (`corral.results.>`) and checks for a
 * published one (`CORRAL_RESULTS`), keeps generated cluster keys (`corral_cluster_keys`), hostpool allocations
 * (`corral_hostpool`) and the installation id (`corral_installation`), and reads cluster records for the docker
 * reconciler (`corral_clusters`). It keeps node health targets (`corral_health_targets`), publishes node health
 * reports (`corral.health.reports.<tenant>`) and answers on-demand checks (`corral.health.check.<tenant>`). It
 * sends no request to any service subject.
 *
 * Everything else is refused by the server: the auth signing keys (`corral_auth_keys`), every other bucket and
 * stream, every `corral.*` service subject (so it can neither ask as the gateway nor answer as a service), and
 * subscriptions outside its own reply prefix (other users' replies, KV reads of the signing keys included, go to
 * `_INBOX.*`). It may not create, update, delete or purge streams: a stream it could create or update could
 * source the signing keys' stream. The buckets it reads are therefore created before it connects
 * (`createProvisionerStores` in bus-setup.ts). It may not list consumers (their deliver subjects are other users'
 * inboxes) nor delete the task and result streams' consumers.
 *
 * What permissions cannot stop: nats-server lets it create a push consumer on a stream it reads whose deliver
 * subject is a service subject (nats-io/nats-server#8274). Services drop such deliveries: they keep the stored
 * message's subject, never a service subject (`serve` in shared/src/rpc.ts).
 */

/** KV buckets the provisioner reads; the first five it also writes. */
export const PROVISIONER_WRITES_BUCKETS = [
  buckets.provisioners,
  buckets.pluginTypes,
  buckets.clusterKeys,
  buckets.hostPool,
  buckets.installation,
  buckets.healthTargets,
] as const;
export const PROVISIONER_READS_BUCKETS = [...PROVISIONER_WRITES_BUCKETS, buckets.assignments, buckets.pluginActive, buckets.clusters] as const;
/** Object stores the provisioner reads. */
export const PROVISIONER_READS_OBJECT_STORES = [objectStores.pluginResources] as const;

/** nats-server `permissions` of one user. */
export interface NatsPermissions {
  publish: { allow: string[]; deny?: string[] };
  subscribe: { allow: string[]; deny?: string[] };
  /** May answer the requests it receives (one reply to each message's reply subject, whatever that is). */
  allow_responses?: boolean;
}

/** JetStream API subjects that read a stream: its info, single messages and direct gets. */
function streamReads(stream: string): string[] {
  return [`$JS.API.STREAM.INFO.${stream}`, `$JS.API.STREAM.MSG.GET.${stream}`, `$JS.API.DIRECT.GET.${stream}`, `$JS.API.DIRECT.GET.${stream}.>`];
}

/** Consumers by name only: no LIST or NAMES, which would show other users' consumers and their deliver subjects. */
function namedConsumers(stream: string): string[] {
  return [
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.INFO.${stream}.>`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.>`,
  ];
}

/** Subjects of the token signing keys' bucket: refused to provisioners even if an allow rule grew to cover them. */
export function authKeysSubjects(): string[] {
  const stream = kvStream(buckets.authKeys);
  return [
    `${kvSubjectPrefix(buckets.authKeys)}>`,
    `$JS.API.*.*.${stream}`,
    `$JS.API.*.*.${stream}.>`,
    `$JS.API.*.*.*.${stream}`,
    `$JS.API.*.*.*.${stream}.>`,
  ];
}

/** The provisioner user's permissions (allow lists: anything not named is refused). */
export function provisionerPermissions(): NatsPermissions {
  const reads = streamReads;
  const consumes = namedConsumers;
  const storeStreams = [...PROVISIONER_READS_BUCKETS.map(kvStream), ...PROVISIONER_READS_OBJECT_STORES.map(objectStoreStream)];
  return {
    publish: {
      allow: [
        "$JS.API.INFO",
        // buckets and object stores: reads, watches and object reads (ordered consumers, deleted when done)
        ...storeStreams.flatMap((s) => [...reads(s), ...consumes(s), `$JS.API.CONSUMER.DELETE.${s}.>`]),
        ...PROVISIONER_WRITES_BUCKETS.map((b) => `${kvSubjectPrefix(b)}>`),
        // tasks: the per-tenant durable consumers (shared/src/tasks.ts ensureTaskConsumer), pulls and acks
        ...reads(streams.tasks),
        ...consumes(streams.tasks),
        `$JS.API.CONSUMER.DURABLE.CREATE.${streams.tasks}.>`,
        `$JS.ACK.${streams.tasks}.>`,
        // results: published, and looked up after a crash (worker-loop.ts)
        ...reads(streams.results),
        streamSubjects[streams.results],
        // flow control answers of ordered push consumers
        "$JS.FC.>",
        // node health reports of the tenants it checks
        healthReportFilter,
      ],
      deny: authKeysSubjects(),
    },
    subscribe: {
      // its replies, and on-demand health checks of the tenants it checks (answered: allow_responses)
      allow: [`${PROVISIONER_INBOX_PREFIX}.>`, healthCheckFilter],
      deny: authKeysSubjects(),
    },
    allow_responses: true,
  };
}

/** What each stream use allows (service-access.ts); reading includes ordered consumers (watches, object reads). */
const STREAM_USES: Readonly<Record<StreamUse, (stream: string) => string[]>> = {
  info: (s) => [`$JS.API.STREAM.INFO.${s}`],
  read: (s) => [...streamReads(s), ...namedConsumers(s), `$JS.API.CONSUMER.DELETE.${s}.>`],
  publish: (s) => (isStreamName(s) ? [streamSubjects[s]] : []),
  consume: (s) => [`$JS.API.CONSUMER.DURABLE.CREATE.${s}.>`, `$JS.ACK.${s}.>`],
  inspect: (s) => [`$JS.API.CONSUMER.LIST.${s}`, `$JS.API.CONSUMER.NAMES.${s}`],
  purge: (s) => [`$JS.API.STREAM.PURGE.${s}`],
  deleteMessages: (s) => [`$JS.API.STREAM.MSG.DELETE.${s}`],
};

const isStreamName = (s: string): s is StreamName => s in streamSubjects;

/**
 * A service user's permissions, from its row of SERVICE_ACCESS and the endpoint table: it subscribes to the
 * subjects of the endpoints it serves, to its own replies (`inboxPrefixOf`) and to what it listens to; it answers
 * requests (allow_responses), calls the endpoints it uses, and reaches the streams, buckets and stores its row
 * names. It creates, updates and deletes no stream. Anything else is refused; the signing keys' bucket is also
 * denied outright to every service that does not use it.
 */
export function servicePermissions(service: CorralService): NatsPermissions {
  const access = SERVICE_ACCESS[service];
  const rows = endpointList().map((r) => r.endpoint);
  const called = access.calls === "rest" ? rows.filter((e) => e.rest) : access.calls.map((name) => endpoints[name] as Endpoint);
  const served = rows.filter((e) => e.service === service && e.subject);
  const subjectsOf = (list: Endpoint[]) => list.flatMap((e) => (e.subject ? [e.subject] : []));
  const uses = new Map<string, StreamUse[]>();
  const use = (stream: string, ...what: StreamUse[]) => uses.set(stream, [...(uses.get(stream) ?? []), ...what]);
  for (const b of access.kv.read) use(kvStream(b), "read");
  for (const b of access.kv.write) use(kvStream(b), "read", "purge");
  for (const o of access.objects.read) use(objectStoreStream(o), "read");
  for (const o of access.objects.write) use(objectStoreStream(o), "read", "purge");
  for (const [stream, what] of Object.entries(access.streams)) use(stream, ...what);
  const usesAuthKeys = uses.has(kvStream(buckets.authKeys));
  const publish = [
    "$JS.API.INFO",
    "$JS.FC.>",
    ...subjectsOf(called),
    ...[...uses].flatMap(([stream, what]) => [...new Set(what)].flatMap((w) => STREAM_USES[w](stream))),
    ...access.kv.write.map((b) => `${kvSubjectPrefix(b)}>`),
    ...access.objects.write.map((o) => `${objectStorePrefix(o)}>`),
  ];
  const subscribe = [`${inboxPrefixOf(service)}.>`, ...subjectsOf(served), ...access.listens];
  const deny = usesAuthKeys ? {} : { deny: authKeysSubjects() };
  return {
    publish: { allow: [...new Set(publish)], ...(access.kv.write.includes(buckets.authKeys) ? {} : { deny: authKeysWrites(usesAuthKeys) }) },
    subscribe: { allow: [...new Set(subscribe)], ...deny },
    ...(served.length > 0 ? { allow_responses: true } : {}),
  };
}

/** Publishes that would touch the signing keys: all of {@link authKeysSubjects}, or only their writes for a reader. */
function authKeysWrites(reads: boolean): string[] {
  return reads ? [`${kvSubjectPrefix(buckets.authKeys)}>`, `$JS.API.STREAM.PURGE.${kvStream(buckets.authKeys)}`] : authKeysSubjects();
}

/** The subjects of an object store's chunks and metadata (NATS ADR-20). */
const objectStorePrefix = (store: string) => `$O.${store}.`;

/**
 * The nats-server users of an installation: the admin may do anything (setting up streams and buckets), each
 * service and provisioners what is above.
 */
export function natsUsers(credentials: BusCredentials): NatsUser[] {
  return [
    { ...credentials.admin },
    ...CORRAL_SERVICES.map((s) => ({ ...credentials.services[s], permissions: servicePermissions(s) })),
    { ...credentials.provisioner, permissions: provisionerPermissions() },
  ];
}
