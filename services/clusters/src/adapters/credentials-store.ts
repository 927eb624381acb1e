import { fromKeyToken, kvKey, type JsonObject } from "@corral/contracts";
import { listKeys, purgeKeys, putValue, readValue, type KV } from "@corral/shared";

/** One plan's provider fields as stored (key `<cluster>.<plan>`). */
interface StoredFields {
  clusterId: string;
  planId: string;
  fields: JsonObject;
  /** ms */
  writtenAt: number;
}

/** A stored entry as the sweep sees it; `planId` is absent for entries of the older per-cluster layout. */
export interface StoredFieldsEntry {
  clusterId: string;
  planId?: string;
  /** ms; 0 for entries of the older layout. */
  writtenAt: number;
}

/**
 * Provider fields a request gave for one operation (they may be secrets): kept apart from the cluster record in a
 * bucket with no history, one key per plan, handed to provisioners inside that plan's tasks, and purged when the
 * plan ends. Nothing outlives the plan: the next operation brings its own fields.
 */
export interface CredentialStore {
  /** The fields the request of a plan gave; `{}` when it gave none or they were purged. */
  get(clusterId: string, planId: string): Promise<JsonObject>;
  /** Keeps a plan's fields until they are purged; writes nothing for none. */
  put(clusterId: string, planId: string, fields: JsonObject, now: number): Promise<void>;
  /** Removes a plan's fields. Idempotent. */
  purge(clusterId: string, planId: string): Promise<void>;
  /** Removes the fields of every plan of a cluster. Idempotent. */
  wipe(clusterId: string): Promise<void>;
  /** Every stored entry, for the sweep that removes what no running plan needs. */
  entries(): Promise<StoredFieldsEntry[]>;
  /** Removes one entry {@link entries} listed. Idempotent. */
  remove(entry: StoredFieldsEntry): Promise<void>;
}

export function createCredentialStore(kv: KV): CredentialStore {
  const keyOf = (clusterId: string, planId: string) => kvKey(clusterId, planId);
  // The older layout kept one entry per cluster, under the cluster id alone, until the cluster was terminated.
  const legacyKeyOf = (clusterId: string) => kvKey(clusterId);
  // Every revision goes, and no delete marker stays behind to pile up (nothing watches this bucket).
  const purgeKey = async (key: string) => {
    await purgeKeys(kv, key);
  };
  return {
    async get(clusterId, planId) {
      return (await readValue<StoredFields>(kv, keyOf(clusterId, planId)))?.value.fields ?? {};
    },
    async put(clusterId, planId, fields, now) {
      if (Object.keys(fields).length === 0) return;
      await putValue<StoredFields>(kv, keyOf(clusterId, planId), { clusterId, planId, fields, writtenAt: now });
    },
    purge: (clusterId, planId) => purgeKey(keyOf(clusterId, planId)),
    async wipe(clusterId) {
      await Promise.all([purgeKey(`${legacyKeyOf(clusterId)}.*`), purgeKey(legacyKeyOf(clusterId))]);
    },
    async entries() {
      const out: StoredFieldsEntry[] = [];
      for (const key of await listKeys(kv)) {
        const [cluster, plan] = key.split(".");
        if (cluster === undefined) continue;
        const writtenAt = (await readValue<Partial<StoredFields>>(kv, key))?.value.writtenAt;
        out.push({
          clusterId: fromKeyToken(cluster),
          ...(plan !== undefined ? { planId: fromKeyToken(plan) } : {}),
          writtenAt: typeof writtenAt === "number" ? writtenAt : 0,
        });
      }
      return out;
    },
    remove: (entry) => purgeKey(entry.planId === undefined ? legacyKeyOf(entry.clusterId) : keyOf(entry.clusterId, entry.planId)),
  };
}
