import type { NatsConnection } from "@nats-io/transport-node";
import { buckets, keyToken, kvKey } from "@corral/contracts";
import { createValue, listValues, openBucket, purgeKeys, putValue, type KV } from "@corral/shared";
import type { DeliveryRecord } from "../domain/delivery-record.js";

/** Each delivery's state (KV `corral_webhook_deliveries`, keys `<tenant>.<webhook id>.<delivery id>`). */
export interface DeliveryStore {
  /** Stores a new delivery; false when it is stored already (its event was handed over again after a restart). */
  add(record: DeliveryRecord): Promise<boolean>;
  /** Stores a delivery's new state. */
  save(record: DeliveryRecord): Promise<void>;
  /** The deliveries of one endpoint. */
  ofWebhook(tenant: string, webhookId: string): Promise<DeliveryRecord[]>;
  /** Every delivery still pending, of every endpoint. */
  pending(): Promise<DeliveryRecord[]>;
  /** Forgets every delivery of a deleted endpoint. */
  dropWebhook(tenant: string, webhookId: string): Promise<void>;
}

const keyOf = (record: Pick<DeliveryRecord, "tenant" | "webhookId" | "id">) => kvKey(record.tenant, record.webhookId, record.id);

export async function openDeliveryStore(nc: NatsConnection): Promise<DeliveryStore> {
  const kv: KV = await openBucket(nc, buckets.webhookDeliveries);
  return {
    async add(record) {
      return (await createValue(kv, keyOf(record), record)) !== undefined;
    },
    async save(record) {
      await putValue(kv, keyOf(record), record);
    },
    async ofWebhook(tenant, webhookId) {
      return (await listValues<DeliveryRecord>(kv, `${keyToken(tenant)}.${keyToken(webhookId)}.*`)).map((e) => e.value);
    },
    async pending() {
      return (await listValues<DeliveryRecord>(kv, "*.*.*")).map((e) => e.value).filter((r) => r.status === "pending");
    },
    async dropWebhook(tenant, webhookId) {
      await purgeKeys(kv, `${keyToken(tenant)}.${keyToken(webhookId)}.*`);
    },
  };
}
