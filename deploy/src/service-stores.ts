import type { NatsConnection } from "@nats-io/transport-node";
import { buckets, objectStores } from "@corral/contracts";
import { ensureLiveEventRepublish, openBucket, openObjectStore } from "@corral/shared";

/**
 * Creates every KV bucket and object store of Corral (as their owners would: `openBucket` applies each bucket's
 * settings) and gives the events stream its republish rule, after `ensureStreams`. Services may not create or update
 * streams (bus-permissions.ts): everything they open must exist before they connect. Idempotent.
 */
export async function createServiceStores(nc: NatsConnection): Promise<void> {
  await Promise.all(Object.values(buckets).map((name) => openBucket(nc, name)));
  await Promise.all(Object.values(objectStores).map((name) => openObjectStore(nc, name)));
  await ensureLiveEventRepublish(nc);
}
