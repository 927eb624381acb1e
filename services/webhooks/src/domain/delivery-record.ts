import type { WebhookDelivery } from "@corral/contracts";

/** A delivery as stored (KV `corral_webhook_deliveries`): what the API lists, and what an attempt needs. */
export interface DeliveryRecord extends WebhookDelivery {
  tenant: string;
  webhookId: string;
  lane: string;
  /** The order within the lane: the source's sequence and place. */
  seq: number;
  index: number;
  /** The JSON body, the same on every attempt. */
  body: string;
}

/** A delivery as `GET /webhooks/{id}/deliveries` shows it. */
export function deliveryView(record: DeliveryRecord): WebhookDelivery {
  const { tenant: _tenant, webhookId: _webhookId, lane: _lane, seq: _seq, index: _index, body: _body, ...view } = record;
  return view;
}

/** Lane order: earlier source first. */
export const bySource = (a: DeliveryRecord, b: DeliveryRecord): number => a.seq - b.seq || a.index - b.index;
