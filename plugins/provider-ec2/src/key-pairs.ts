import type { ClusterKeys } from "@corral/provisioner/sdk";
import { isEc2Code, type Ec2Api } from "./ec2-api.js";
import { liveInstances } from "./instances.js";
import { clusterFilters, keyPairName, keyPairTags } from "./naming.js";

/** `type base64` of an OpenSSH public key line, without its comment. */
const keyBody = (line: string) => line.trim().split(/\s+/).slice(0, 2).join(" ");

/** Imports done by this process, per client and key: concurrent CREATEs of a cluster share one. */
const imported = new WeakMap<Ec2Api, Map<string, Promise<void>>>();

function importsOf(api: Ec2Api): Map<string, Promise<void>> {
  let map = imported.get(api);
  if (!map) imported.set(api, (map = new Map()));
  return map;
}

/** Forgets that a key pair was imported (it was deleted, or EC2 says it is missing). */
export function forgetKeyPair(api: Ec2Api, name: string): void {
  const map = importsOf(api);
  for (const key of map.keys()) if (key.startsWith(`${name}\0`)) map.delete(key);
}

/**
 * The cluster's key pair in EC2, named after tenant and cluster and holding the public half of its cluster key:
 * imported when missing; a pair of that name holding another key (left by an earlier key of the cluster) is
 * replaced. Returns its name.
 */
export async function ensureClusterKeyPair(
  api: Ec2Api,
  clusterKeys: ClusterKeys,
  installation: string,
  tenant: string,
  clusterId: string,
  signal?: AbortSignal,
): Promise<string> {
  const key = await clusterKeys.getOrCreate(tenant, clusterId);
  const name = keyPairName(installation, tenant, clusterId);
  const memo = `${name}\0${keyBody(key.publicKey)}`;
  const map = importsOf(api);
  let done = map.get(memo);
  if (!done) {
    done = importOrReplace(api, name, key.publicKey, keyPairTags(installation, tenant, clusterId), signal);
    map.set(memo, done);
    done.catch(() => map.delete(memo));
  }
  await done;
  return name;
}

async function importOrReplace(api: Ec2Api, name: string, publicKey: string, tags: Parameters<Ec2Api["importKeyPair"]>[2], signal?: AbortSignal): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await api.importKeyPair(name, publicKey, tags, signal);
    } catch (err) {
      if (!isEc2Code(err, "InvalidKeyPair.Duplicate") || attempt > 2) throw err;
    }
    const existing = await api.describeKeyPair(name, signal);
    // A cloud that does not return public keys cannot be checked: the name is the cluster's, so it is taken as is.
    if (!existing || existing.publicKey === undefined || keyBody(existing.publicKey) === keyBody(publicKey)) return;
    await api.deleteKeyPair(name, signal);
  }
}

/**
 * Removes the cluster's key pair (in EC2 and the cluster key) once no live instance of the cluster is left: the
 * cluster's last DELETE, or the orphan sweep. Returns whether there was one to remove.
 */
export async function removeKeyPairOfEmptyCluster(
  api: Ec2Api,
  clusterKeys: ClusterKeys,
  installation: string,
  tenant: string,
  clusterId: string,
  signal?: AbortSignal,
): Promise<boolean> {
  if ((await liveInstances(api, clusterFilters(installation, tenant, clusterId), signal)).length > 0) return false;
  const name = keyPairName(installation, tenant, clusterId);
  const had = (await clusterKeys.read(tenant, clusterId)) !== undefined;
  forgetKeyPair(api, name);
  try {
    await api.deleteKeyPair(name, signal);
  } catch (err) {
    if (!isEc2Code(err, "InvalidKeyPair.NotFound")) throw err;
  }
  if (had) await clusterKeys.remove(tenant, clusterId);
  return had;
}
