import { Objm } from "@nats-io/obj";
import type { NatsConnection } from "@nats-io/transport-node";
import { ensureStreams, openBucket } from "@corral/shared";
import { CLUSTERS_BUCKET, PROVISIONER_READS_BUCKETS, PROVISIONER_READS_OBJECT_STORES } from "./bus-permissions.js";

/** Settings that differ from `openBucket`'s for buckets this module creates (services/clusters opens it so). */
const BUCKET_OPTIONS: Readonly<Record<string, { history: number }>> = { [CLUSTERS_BUCKET]: { history: 5 } };

/**
 * Creates the task, result and event streams and every bucket and object store a provisioner reads, as the
 * services would (idempotent; existing ones are kept as they are). Run with the services' credentials before
 * services and provisioners start: provisioners may not create streams (bus-permissions.ts), and a provisioner
 * that starts before the clusters service no longer waits for the task stream.
 */
export async function prepareBus(nc: NatsConnection): Promise<void> {
  await ensureStreams(nc);
  await Promise.all(PROVISIONER_READS_BUCKETS.map((name) => openBucket(nc, name, BUCKET_OPTIONS[name] ?? {})));
  const objm = new Objm(nc);
  await Promise.all(PROVISIONER_READS_OBJECT_STORES.map((name) => objm.create(name)));
}
