import type { NatsConnection } from "@nats-io/transport-node";
import { generateSshKeyPair } from "./ssh/key-pair.js";
import { buckets, kvKey } from "@corral/contracts";
import { createValue, deleteValue, openBucket, readValue, retryingOnce, type KV } from "@corral/shared";

/** An SSH key pair a provider generated for one cluster (OpenSSH formats). */
export interface ClusterKey {
  privateKey: string;
  publicKey: string;
  createdAt: number;
}

/**
 * Per-cluster SSH key pairs (bucket `corral_cluster_keys`, key `<tenant>.<clusterId>`): the first CREATE of a
 * cluster generates one and every provisioner that runs a later task of the cluster reads it, so no private key
 * travels in task results or sits on a provisioner's disk. Concurrent CREATEs of one cluster agree on one pair
 * (KV create: the first writer wins, the others read it).
 */
export class ClusterKeys {
  private readonly bucket: () => Promise<KV>;

  constructor(nc: NatsConnection) {
    this.bucket = retryingOnce(() => openBucket(nc, buckets.clusterKeys));
  }

  async getOrCreate(tenant: string, clusterId: string): Promise<ClusterKey> {
    const kv = await this.bucket();
    const key = kvKey(tenant, clusterId);
    const existing = await readValue<ClusterKey>(kv, key);
    if (existing) return existing.value;
    const made: ClusterKey = { ...generateSshKeyPair(`corral-${tenant}-${clusterId}`), createdAt: Date.now() };
    if ((await createValue(kv, key, made)) !== undefined) return made;
    const winner = await readValue<ClusterKey>(kv, key);
    if (!winner) throw new Error(`cluster key of ${tenant}/${clusterId} vanished while it was created`);
    return winner.value;
  }

  async read(tenant: string, clusterId: string): Promise<ClusterKey | undefined> {
    return (await readValue<ClusterKey>(await this.bucket(), kvKey(tenant, clusterId)))?.value;
  }

  async remove(tenant: string, clusterId: string): Promise<void> {
    await deleteValue(await this.bucket(), kvKey(tenant, clusterId));
  }
}
