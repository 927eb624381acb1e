import type { NatsConnection } from "@nats-io/transport-node";
import { buckets, kvKey } from "@corral/contracts";
import { modifyValue, openBucket, type KV } from "@corral/shared";
import type { ActiveSet } from "../domain/active-set.js";

/** Publishes each tenant's active set (bucket `corral_plugin_active`, key = tenant), which provisioners watch. */
export interface ActiveSetStore {
  /**
   * Writes the tenant's set with compare-and-set; `build` runs (again) on every attempt, reading the metadata
   * afresh, so of two concurrent publications the one written last was built from the newest metadata.
   */
  publish(tenant: string, build: (generation: number) => Promise<ActiveSet>): Promise<ActiveSet>;
}

class KvActiveSetStore implements ActiveSetStore {
  constructor(private readonly kv: KV) {}
  async publish(tenant: string, build: (generation: number) => Promise<ActiveSet>) {
    const written = await modifyValue<ActiveSet>(this.kv, kvKey(tenant), async (current) => ({
      put: await build((current?.value.generation ?? 0) + 1),
    }));
    return written.value as ActiveSet;
  }
}

export async function openActiveSetStore(nc: NatsConnection): Promise<ActiveSetStore> {
  return new KvActiveSetStore(await openBucket(nc, buckets.pluginActive));
}
