import { kvKey, encode, readValue, type JsonObject, type KV } from "@corral/shared";

/**
 * Provider fields a user gave for a cluster (they may be secrets): kept apart from the cluster record, handed
 * to provisioners inside tasks, and wiped when the cluster is terminated.
 */
export interface CredentialStore {
  get(clusterId: string): Promise<JsonObject>;
  /** Merges new fields over the stored ones. */
  merge(clusterId: string, fields: JsonObject): Promise<void>;
  wipe(clusterId: string): Promise<void>;
}

export function createCredentialStore(kv: KV): CredentialStore {
  const get = async (clusterId: string) => (await readValue<JsonObject>(kv, kvKey(clusterId)))?.value ?? {};
  return {
    get,
    async merge(clusterId, fields) {
      if (Object.keys(fields).length === 0) return;
      await kv.put(kvKey(clusterId), encode({ ...(await get(clusterId)), ...fields }));
    },
    async wipe(clusterId) {
      await kv.purge(kvKey(clusterId));
    },
  };
}
