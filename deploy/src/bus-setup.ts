import { Objm } from "@nats-io/obj";
import type { NatsConnection } from "@nats-io/transport-node";
import { ensureStreams, openBucket } from "@corral/shared";
import { PROVISIONER_READS_BUCKETS, PROVISIONER_READS_OBJECT_STORES } from "./bus-permissions.js";

/**
 * What the launcher creates before anything else connects (idempotent; existing streams and buckets are kept as
 * they are), with the services' credentials: the task, result and event streams, so a provisioner that starts
 * before the clusters service does not wait for the task stream, and {@link createProvisionerStores}.
 */
export async function prepareBus(nc: NatsConnection): Promise<void> {
  await ensureStreams(nc);
  await createProvisionerStores(nc);
}

/**
 * Creates every bucket and object store a provisioner reads, as the services would. Provisioners may not create
 * streams (bus-permissions.ts), so these must exist before the first one connects.
 */
export async function createProvisionerStores(nc: NatsConnection): Promise<void> {
  await Promise.all(PROVISIONER_READS_BUCKETS.map((name) => openBucket(nc, name)));
  const objm = new Objm(nc);
  await Promise.all(PROVISIONER_READS_OBJECT_STORES.map((name) => objm.create(name)));
}
