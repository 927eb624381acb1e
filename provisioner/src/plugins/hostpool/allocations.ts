import type { NatsConnection } from "@nats-io/transport-node";
import { buckets, type HostAllocation } from "@corral/contracts";
import {
  createValue,
  hostAllocationFilter,
  hostAllocationKey,
  listValues,
  modifyValue,
  openBucket,
  readValue,
  retryingOnce,
  type KV,
} from "@corral/shared";

/** What DELETE does with a node's host: free it, or hold it back for the admin. */
export type Settlement = { free: true } | { quarantine: string };

/**
 * Allocations of hostpool hosts in bucket `corral_hostpool`. A claim is a KV create, so of any number of
 * provisioners racing for one host exactly one gets it; every later change is a compare-and-set that only
 * touches the key while it still names the same node.
 */
export class HostAllocations {
  private readonly bucket: () => Promise<KV>;

  constructor(nc: NatsConnection) {
    this.bucket = retryingOnce(() => openBucket(nc, buckets.hostPool));
  }

  async list(tenant: string, provider: string): Promise<HostAllocation[]> {
    return (await listValues<HostAllocation>(await this.bucket(), hostAllocationFilter(tenant, provider))).map((e) => e.value);
  }

  async read(tenant: string, provider: string, host: string): Promise<HostAllocation | undefined> {
    return (await readValue<HostAllocation>(await this.bucket(), hostAllocationKey(tenant, provider, host)))?.value;
  }

  /** Takes a free host; false when it is not free. */
  async claim(tenant: string, provider: string, allocation: HostAllocation): Promise<boolean> {
    return (await createValue(await this.bucket(), hostAllocationKey(tenant, provider, allocation.host), allocation)) !== undefined;
  }

  /** Frees or quarantines the host of `nodeId`; false when the key no longer holds that node's allocation. */
  async settle(tenant: string, provider: string, host: string, nodeId: string, how: Settlement, now: number): Promise<boolean> {
    let changed = false;
    await modifyValue<HostAllocation>(await this.bucket(), hostAllocationKey(tenant, provider, host), (current) => {
      changed = false;
      if (current?.value.nodeId !== nodeId || current.value.state !== "allocated") return { keep: true };
      changed = true;
      if ("free" in how) return { delete: true };
      return { put: { ...current.value, state: "quarantined", since: now, reason: how.quarantine } };
    });
    return changed;
  }
}
