import {
  buckets,
  kvStream,
  kvSubjectPrefix,
  objectStores,
  objectStoreStream,
  PROVISIONER_INBOX_PREFIX,
  streams,
  streamSubjects,
} from "@corral/contracts";
import type { BusCredentials } from "./bus-credentials.js";
import type { NatsUser } from "./servers.js";

/**
 * What the provisioner NATS user may do, found by reading provisioner/src: it registers and heartbeats
 * (`corral_provisioners`, `corral_plugintypes`), watches its worker assignment (`corral_assignments`) and the
 * tenants' live plugin resources (`corral_plugin_active`, object store `corral_plugin_resources`), pulls tasks
 * (`CORRAL_TASKS`, one durable consumer per tenant), publishes results (`corral.results.>`) and checks for a
 * published one (`CORRAL_RESULTS`), keeps generated cluster keys (`corral_cluster_keys`), hostpool allocations
 * (`corral_hostpool`) and the installation id (`corral_installation`), and reads cluster records for the docker
 * reconciler (`corral_clusters`). It sends no request to any service subject.
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
] as const;
export const PROVISIONER_READS_BUCKETS = [...PROVISIONER_WRITES_BUCKETS, buckets.assignments, buckets.pluginActive, buckets.clusters] as const;
/** Object stores the provisioner reads. */
export const PROVISIONER_READS_OBJECT_STORES = [objectStores.pluginResources] as const;

/** nats-server `permissions` of one user. */
export interface NatsPermissions {
  publish: { allow: string[]; deny?: string[] };
  subscribe: { allow: string[]; deny?: string[] };
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
  const reads = (stream: string) => [
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.STREAM.MSG.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}.>`,
  ];
  // Consumers by name only: no LIST or NAMES, which would show other users' consumers and their deliver subjects.
  const consumes = (stream: string) => [
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.INFO.${stream}.>`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.>`,
  ];
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
      ],
      deny: authKeysSubjects(),
    },
    subscribe: {
      allow: [`${PROVISIONER_INBOX_PREFIX}.>`],
      deny: authKeysSubjects(),
    },
  };
}

/** The nats-server users of an installation: the services may do anything, provisioners what is above. */
export function natsUsers(credentials: BusCredentials): NatsUser[] {
  return [
    { ...credentials.services },
    { ...credentials.provisioner, permissions: provisionerPermissions() },
  ];
}
