import { buckets, objectStores, PROVISIONER_INBOX_PREFIX, streams } from "@corral/shared";
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
 * (`createProvisionerStores` in bus-setup.ts).
 */

/** The `corral_clusters` bucket (services/clusters `clusterBuckets.clusters`; provisioner `CLUSTERS_BUCKET`). */
export const CLUSTERS_BUCKET = "corral_clusters";

/** KV buckets the provisioner reads; the first five it also writes. */
export const PROVISIONER_WRITES_BUCKETS = [
  buckets.provisioners,
  buckets.pluginTypes,
  buckets.clusterKeys,
  buckets.hostPool,
  buckets.installation,
] as const;
export const PROVISIONER_READS_BUCKETS = [...PROVISIONER_WRITES_BUCKETS, buckets.assignments, buckets.pluginActive, CLUSTERS_BUCKET] as const;
/** Object stores the provisioner reads. */
export const PROVISIONER_READS_OBJECT_STORES = [objectStores.pluginResources] as const;

/** nats-server `permissions` of one user. */
export interface NatsPermissions {
  publish: { allow: string[]; deny?: string[] };
  subscribe: { allow: string[]; deny?: string[] };
}

/** Subjects of the token signing keys' bucket: refused to provisioners even if an allow rule grew to cover them. */
export function authKeysSubjects(): string[] {
  const stream = `KV_${buckets.authKeys}`;
  return [
    `$KV.${buckets.authKeys}.>`,
    `$JS.API.*.*.${stream}`,
    `$JS.API.*.*.${stream}.>`,
    `$JS.API.*.*.*.${stream}`,
    `$JS.API.*.*.*.${stream}.>`,
  ];
}

/** The provisioner user's permissions (allow lists: anything not named is refused). */
export function provisionerPermissions(): NatsPermissions {
  const readStreams = [
    ...PROVISIONER_READS_BUCKETS.map((b) => `KV_${b}`),
    ...PROVISIONER_READS_OBJECT_STORES.map((o) => `OBJ_${o}`),
    streams.tasks,
    streams.results,
  ];
  const perStream = readStreams.flatMap((s) => [
    `$JS.API.STREAM.INFO.${s}`,
    `$JS.API.STREAM.MSG.GET.${s}`,
    `$JS.API.DIRECT.GET.${s}`,
    `$JS.API.DIRECT.GET.${s}.>`,
    // CREATE (ordered consumers of watches and object reads, the tasks consumer), INFO, DELETE, ...
    `$JS.API.CONSUMER.*.${s}`,
    `$JS.API.CONSUMER.*.${s}.>`,
    `$JS.API.CONSUMER.DURABLE.CREATE.${s}.>`,
    // pulls: the tasks feed, object reads (shared/src/object-reader.ts)
    `$JS.API.CONSUMER.MSG.NEXT.${s}.>`,
  ]);
  return {
    publish: {
      allow: [
        "$JS.API.INFO",
        ...perStream,
        `$JS.ACK.${streams.tasks}.>`,
        // flow control answers of ordered push consumers (watches, object reads)
        "$JS.FC.>",
        ...PROVISIONER_WRITES_BUCKETS.map((b) => `$KV.${b}.>`),
        "corral.results.>",
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
