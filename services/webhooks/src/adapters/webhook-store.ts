import type { NatsConnection } from "@nats-io/transport-node";
import { buckets, keyToken, kvKey, type WebhookRecord } from "@corral/contracts";
import { createValue, deleteValue, listValues, modifyValue, openBucket, readValue, type KV } from "@corral/shared";

/** The registered endpoints (KV `corral_webhooks`, keys `<tenant>.<id>`): every read and write names its tenant. */
export interface WebhookStore {
  create(record: WebhookRecord): Promise<void>;
  get(tenant: string, id: string): Promise<WebhookRecord | undefined>;
  list(tenant: string): Promise<WebhookRecord[]>;
  /** Applies `change` to the stored endpoint (retried on a concurrent write); undefined when there is none. */
  update(tenant: string, id: string, change: (record: WebhookRecord) => WebhookRecord): Promise<WebhookRecord | undefined>;
  /** False when there was none. */
  delete(tenant: string, id: string): Promise<boolean>;
  /** The tenant's endpoints, read at most `maxAgeMs` ago (the delivery of events asks for each). */
  cached(tenant: string): Promise<WebhookRecord[]>;
}

export async function openWebhookStore(nc: NatsConnection, options: { maxAgeMs?: number } = {}): Promise<WebhookStore> {
  const kv: KV = await openBucket(nc, buckets.webhooks);
  const maxAgeMs = options.maxAgeMs ?? 1000;
  const cache = new Map<string, { at: number; records: Promise<WebhookRecord[]> }>();
  const list = async (tenant: string) =>
    (await listValues<WebhookRecord>(kv, `${keyToken(tenant)}.*`)).map((e) => e.value).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  const forget = (tenant: string) => cache.delete(tenant);
  return {
    async create(record) {
      if ((await createValue(kv, kvKey(record.tenant, record.id), record)) === undefined) throw new Error(`webhook ${record.id} exists already`);
      forget(record.tenant);
    },
    async get(tenant, id) {
      return (await readValue<WebhookRecord>(kv, kvKey(tenant, id)))?.value;
    },
    list,
    async update(tenant, id, change) {
      const modified = await modifyValue<WebhookRecord>(kv, kvKey(tenant, id), (current) => (current === undefined ? { keep: true } : { put: change(current.value) }));
      forget(tenant);
      return modified?.value;
    },
    async delete(tenant, id) {
      const existing = await readValue<WebhookRecord>(kv, kvKey(tenant, id));
      if (!existing) return false;
      await deleteValue(kv, kvKey(tenant, id));
      forget(tenant);
      return true;
    },
    cached(tenant) {
      const hit = cache.get(tenant);
      if (hit && Date.now() - hit.at < maxAgeMs) return hit.records;
      const records = list(tenant);
      cache.set(tenant, { at: Date.now(), records });
      records.catch(() => forget(tenant));
      return records;
    },
  };
}
