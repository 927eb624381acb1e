import type { NatsConnection } from "@nats-io/transport-node";
import { buckets, kvKey, type HostAllocation } from "@corral/contracts";
import {
  hostAllocationFilter,
  hostAllocationKey,
  listValues,
  modifyValue,
  openBucket,
  purgeKeys,
  type KV,
} from "@corral/shared";

/** Tenancy's side of the `hostpool` allocations the provisioners write (bucket `corral_hostpool`). */
export interface HostPoolStore {
  list(tenant: string, provider: string): Promise<HostAllocation[]>;
  /** Deletes the host's key if it is quarantined (compare-and-set); false when it is not. */
  releaseQuarantined(tenant: string, provider: string, host: string): Promise<boolean>;
  /** Forgets every allocation of a deleted tenant (of terminated clusters, and quarantines). */
  purgeTenant(tenant: string): Promise<void>;
}

class KvHostPoolStore implements HostPoolStore {
  constructor(private readonly kv: KV) {}
  async list(tenant: string, provider: string) {
    return (await listValues<HostAllocation>(this.kv, hostAllocationFilter(tenant, provider))).map((e) => e.value);
  }
  async releaseQuarantined(tenant: string, provider: string, host: string) {
    let released = false;
    await modifyValue<HostAllocation>(this.kv, hostAllocationKey(tenant, provider, host), (current) => {
      released = current?.value.state === "quarantined";
      return released ? { delete: true } : { keep: true };
    });
    return released;
  }
  async purgeTenant(tenant: string) {
    await purgeKeys(this.kv, `${kvKey(tenant)}.>`);
  }
}

export async function openHostPoolStore(nc: NatsConnection): Promise<HostPoolStore> {
  return new KvHostPoolStore(await openBucket(nc, buckets.hostPool));
}
