import { randomBytes } from "node:crypto";
import {
  BadRequestError,
  NotFoundError,
  WEBHOOK_DELIVERIES_DEFAULT,
  WEBHOOK_TEST_EVENT,
  type CreatedWebhook,
  type WebhookDelivery,
  type WebhookRecord,
  type WebhookView,
} from "@corral/contracts";
import type { EndpointHandlers } from "@corral/shared";
import type { DeliveryStore } from "../adapters/delivery-store.js";
import type { Sender } from "../adapters/http-sender.js";
import type { WebhookStore } from "../adapters/webhook-store.js";
import { urlProblem, type AddressPolicy } from "../domain/address-policy.js";
import { deliveryView, type DeliveryRecord } from "../domain/delivery-record.js";
import { payloadOf } from "../domain/events.js";
import { generateSecret, signedHeaders } from "../domain/signature.js";

export interface WebhookHandlerDeps {
  webhooks: WebhookStore;
  deliveries: DeliveryStore;
  policy: AddressPolicy;
  sender: Sender;
  now?: () => number;
}

/** An endpoint as the API shows it: everything but its secret and tenant. */
export function viewOf(record: WebhookRecord): WebhookView {
  const { secret: _secret, tenant: _tenant, ...view } = record;
  return view;
}

function checkedUrl(url: string, policy: AddressPolicy): string {
  const problem = urlProblem(url, policy);
  if (problem !== undefined) throw new BadRequestError(`url ${problem}`, { field: "url" });
  return url;
}

/**
 * The webhook endpoints. Every one acts on the caller's tenant only (the gateway let only its admins through): an id
 * of another tenant's endpoint is not found.
 */
export function webhookHandlers(deps: WebhookHandlerDeps) {
  const { webhooks, deliveries, policy } = deps;
  const now = deps.now ?? Date.now;
  const found = async (tenant: string, id: string): Promise<WebhookRecord> => {
    const record = await webhooks.get(tenant, id);
    if (!record) throw new NotFoundError("webhook", id);
    return record;
  };
  return {
    "webhooks.create": async ({ identity, body }): Promise<CreatedWebhook> => {
      const at = new Date(now()).toISOString();
      const record: WebhookRecord = {
        id: randomBytes(8).toString("hex"),
        tenant: identity.tenant,
        url: checkedUrl(body.url, policy),
        events: body.events,
        description: body.description ?? "",
        enabled: true,
        createdAt: at,
        updatedAt: at,
        secret: body.secret ?? generateSecret(),
      };
      await webhooks.create(record);
      return { ...viewOf(record), secret: record.secret };
    },
    "webhooks.list": async ({ identity }) => (await webhooks.list(identity.tenant)).map(viewOf),
    "webhooks.get": async ({ identity, params }) => viewOf(await found(identity.tenant, params.id)),
    "webhooks.update": async ({ identity, params, body }) => {
      const url = body.url === undefined ? undefined : checkedUrl(body.url, policy);
      const updated = await webhooks.update(identity.tenant, params.id, (current) => {
        const next: WebhookRecord = {
          ...current,
          ...(url !== undefined ? { url } : {}),
          ...(body.events !== undefined ? { events: body.events } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
          ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
          updatedAt: new Date(now()).toISOString(),
        };
        if (next.enabled) delete next.disabled;
        return next;
      });
      if (!updated) throw new NotFoundError("webhook", params.id);
      return viewOf(updated);
    },
    "webhooks.delete": async ({ identity, params }) => {
      if (!(await webhooks.delete(identity.tenant, params.id))) throw new NotFoundError("webhook", params.id);
      await deliveries.dropWebhook(identity.tenant, params.id);
    },
    "webhooks.deliveries": async ({ identity, params, query }) => {
      await found(identity.tenant, params.id);
      const limit = query.limit ?? WEBHOOK_DELIVERIES_DEFAULT;
      const records = await deliveries.ofWebhook(identity.tenant, params.id);
      records.sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.seq - a.seq || b.index - a.index);
      return { deliveries: records.slice(0, limit).map(deliveryView) };
    },
    "webhooks.purgeTenant": async ({ tenant }) => {
      const records = await webhooks.list(tenant);
      for (const record of records) {
        await deliveries.dropWebhook(tenant, record.id);
        await webhooks.delete(tenant, record.id);
      }
      return { removed: records.length };
    },
    "webhooks.test": async ({ identity, params }): Promise<WebhookDelivery> => {
      const webhook = await found(identity.tenant, params.id);
      const at = now();
      const id = `msg_${webhook.id}_test_${randomBytes(6).toString("hex")}`;
      const body = payloadOf({ tenant: webhook.tenant, type: WEBHOOK_TEST_EVENT, at, data: { webhookId: webhook.id } });
      // One attempt, answered at once; the endpoint's lanes and its enabled state are left alone.
      const outcome = await deps.sender.post(webhook.url, signedHeaders(webhook.secret, id, Math.floor(at / 1000), body), body);
      const record: DeliveryRecord = {
        id,
        type: WEBHOOK_TEST_EVENT,
        clusterId: "",
        status: outcome.ok ? "succeeded" : "failed",
        attempts: 1,
        createdAt: new Date(at).toISOString(),
        lastAttemptAt: new Date(at).toISOString(),
        durationMs: outcome.durationMs,
        ...(outcome.ok ? { deliveredAt: new Date(now()).toISOString() } : {}),
        ...(outcome.status !== undefined ? { responseStatus: outcome.status } : {}),
        ...(outcome.error !== undefined ? { error: outcome.error } : {}),
        tenant: webhook.tenant,
        webhookId: webhook.id,
        lane: "test",
        seq: 0,
        index: 0,
        body,
      };
      await deliveries.save(record);
      return deliveryView(record);
    },
  } satisfies EndpointHandlers<"webhooks">;
}
