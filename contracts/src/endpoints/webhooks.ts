/**
 * Webhook endpoints: a tenant admin registers URLs told of the tenant's cluster events and audit entries (answered by
 * the webhooks service; docs/webhooks.md). Every route is the tenant's own: no tenant sees or touches another's.
 */
import { Type } from "@sinclair/typebox";
import {
  DELIVERY_STATUSES,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_SECRET_PATTERN,
  type CreatedWebhook,
  type WebhookDelivery,
  type WebhookDeliveryPage,
  type WebhookView,
} from "../webhooks.js";
import { subjects } from "../subjects.js";
import { bodyOf, booleanField, distinct, integerField, nameField, textField } from "../validation/fields.js";
import { registerPattern } from "../validation/problems.js";
import { endpointsOf, route } from "./endpoint.js";
import { arrayOf, boolean, count, objectOf, oneOfValues, string, typedSchema } from "./json-schema.js";

/** Deliveries one page lists at most, and by default. */
export const WEBHOOK_DELIVERIES_MAX = 100;
export const WEBHOOK_DELIVERIES_DEFAULT = 20;

const URL_PATTERN = "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$";
registerPattern(URL_PATTERN, "an http or https URL");
registerPattern(WEBHOOK_SECRET_PATTERN, "a secret `whsec_` followed by the base64 of 24 to 64 bytes");

const urlField = Type.String({ pattern: URL_PATTERN, maxLength: 2048, description: "Where deliveries are POSTed: http or https." });
const eventsField = distinct(
  arrayOf(oneOfValues(WEBHOOK_EVENT_TYPES), { minItems: 1, description: "The event types delivered: cluster event types, `audit` for the tenant's audit entries." }),
);
const descriptionField = Type.String({ maxLength: 1024, description: "Free text." });

const disabledSchema = objectOf({ at: string, reason: string });
const viewFields = {
  id: string,
  url: string,
  events: arrayOf(oneOfValues(WEBHOOK_EVENT_TYPES)),
  description: string,
  enabled: boolean,
  createdAt: string,
  updatedAt: string,
};
const viewSchema = objectOf(viewFields, { optional: { disabled: disabledSchema } });
const createdSchema = objectOf({ ...viewFields, secret: Type.String({ description: "Shown this once; never answered again." }) }, { optional: { disabled: disabledSchema } });
const deliverySchema = objectOf(
  { id: string, type: string, clusterId: string, status: oneOfValues(DELIVERY_STATUSES), attempts: count, createdAt: string },
  { optional: { lastAttemptAt: string, nextAttemptAt: string, deliveredAt: string, responseStatus: count, durationMs: count, error: string } },
);

const idParams = { params: Type.Object({ id: textField({ description: "The endpoint's id." }) }) };
const notFound = "No endpoint of the caller's tenant has this id.";

const define = endpointsOf("webhooks");
const w = subjects.webhooks;
const one = "/webhooks/:id";

export const webhookEndpoints = {
  "webhooks.create": define.rest({
    subject: w.create,
    routes: [route("POST", "/webhooks")],
    access: "admin",
    body: "json",
    request: {
      body: bodyOf(
        { url: urlField, events: eventsField },
        {
          secret: Type.String({ pattern: WEBHOOK_SECRET_PATTERN, description: "The signing secret; absent: one is generated." }),
          description: descriptionField,
        },
      ),
    },
    reply: typedSchema<CreatedWebhook>(createdSchema),
    errors: { 400: "A URL that is no http(s) URL or whose address is loopback, link-local, private or metadata (unless the operator allows it), an unknown event type, a malformed secret." },
  }),
  "webhooks.list": define.get(w.list, "/webhooks", "admin", typedSchema<WebhookView[]>(arrayOf(viewSchema))),
  "webhooks.get": define.get(w.get, one, "admin", typedSchema<WebhookView>(viewSchema), {
    ...idParams,
    errors: { 404: notFound },
  }),
  "webhooks.update": define.rest({
    subject: w.update,
    routes: [route("PUT", one)],
    access: "admin",
    body: "json",
    request: {
      ...idParams,
      body: bodyOf(
        {},
        {
          url: urlField,
          events: eventsField,
          description: descriptionField,
          enabled: booleanField({ description: "`true` enables a disabled endpoint again (its pending deliveries resume); `false` disables it." }),
        },
      ),
    },
    reply: typedSchema<WebhookView>(viewSchema),
    errors: { 400: "As for `POST /webhooks`.", 404: notFound },
  }),
  "webhooks.delete": define.command(w.delete, "DELETE", one, "admin", { ...idParams, errors: { 404: notFound } }),
  "webhooks.deliveries": define.get(
    w.deliveries,
    `${one}/deliveries`,
    "admin",
    typedSchema<WebhookDeliveryPage>(objectOf({ deliveries: arrayOf(deliverySchema) })),
    {
      ...idParams,
      query: Type.Object({
        limit: Type.Optional(
          integerField({ minimum: 1, maximum: WEBHOOK_DELIVERIES_MAX, description: `Deliveries listed, most recent first (default ${WEBHOOK_DELIVERIES_DEFAULT}).` }),
        ),
      }),
      errors: { 404: notFound },
    },
  ),
  "webhooks.test": define.rest({
    subject: w.test,
    routes: [route("POST", `${one}/test`)],
    access: "admin",
    body: "none",
    request: idParams,
    reply: typedSchema<WebhookDelivery>(deliverySchema),
    errors: { 404: notFound },
  }),
};

export const webhooksInternalEndpoints = {
  /** Tenant deletion: removes every endpoint of the tenant and their deliveries; `{removed}` endpoints. Idempotent. */
  "webhooks.purgeTenant": define.internal({
    subject: w.purgeTenant,
    request: bodyOf({ tenant: nameField() }),
    reply: objectOf({ removed: count }),
  }),
};
