/**
 * The shared parts of the OpenAPI description (openapi.ts): named schemas, the JSON error body and the error
 * responses built on it, and the security schemes. Plain data.
 */
import {
  catalogSnapshotSchema,
  clusterTemplateSchema,
  machineTypeSchema,
  providerSchema,
  provisionerSchema,
  serviceSchema,
  tenantSchema,
  tenantWriteSchema,
} from "./entity-schemas.js";
import { clusterEventSchema, eventSocketMessageSchema, eventSocketRequestSchema } from "./event-schemas.js";
import { Type } from "@sinclair/typebox";
import { jobStartedSchema } from "./clusters.js";
import { anyObject, arrayOf, boolean, integer, objectOf, recordOf, string, type JsonSchema } from "./json-schema.js";

/** A JSON Schema of the document: the table's schemas, with named ones replaced by `$ref`s to components. */
export type DocSchema = SchemaRef | DocSchemaObject;
export interface SchemaRef {
  $ref: string;
}
export interface DocSchemaObject extends Omit<JsonSchema, "properties" | "items" | "additionalProperties" | "anyOf"> {
  properties?: Record<string, DocSchema>;
  items?: DocSchema;
  additionalProperties?: boolean | DocSchema;
  anyOf?: DocSchema[];
}

/** The JSON error body of every 4xx and 5xx answer (docs/decisions.md, Errors are JSON). */
export const errorBodySchema = objectOf(
  {
    status: integer,
    error: Type.String({ description: "A short code: bad_request, unauthorized, not_found, conflict, ..." }),
    message: Type.String({ description: "What is wrong, for a person to read." }),
  },
  { optional: { details: anyObject } },
);

/** The 400 body when a provider type needs fields the request did not give, one group per alternative. */
export const missingFieldsSchema = objectOf({
  missingFields: arrayOf(
    recordOf(objectOf({ label: string, override: boolean, sensitive: boolean, tip: string, type: string })),
  ),
});

/**
 * Schemas shown once under components and referred to wherever the table uses the same schema object. Order is
 * the order of the document's schema list.
 */
export const namedSchemas: ReadonlyArray<readonly [string, JsonSchema]> = [
  ["Error", errorBodySchema],
  ["MissingFields", missingFieldsSchema],
  ["Tenant", tenantSchema],
  ["TenantWrite", tenantWriteSchema],
  ["Provisioner", provisionerSchema],
  ["Provider", providerSchema],
  ["MachineType", machineTypeSchema],
  ["Service", serviceSchema],
  ["ClusterTemplate", clusterTemplateSchema],
  ["CatalogSnapshot", catalogSnapshotSchema],
  ["JobStarted", jobStartedSchema],
  ["ClusterEvent", clusterEventSchema],
  ["EventSocketRequest", eventSocketRequestSchema],
  ["EventSocketMessage", eventSocketMessageSchema],
];

const componentNames = new Map<JsonSchema, string>(namedSchemas.map(([name, schema]) => [schema, name]));

export const schemaRef = (name: string): SchemaRef => ({ $ref: `#/components/schemas/${name}` });

/** `schema` as the document shows it: a named schema (at any depth) becomes a `$ref`. */
export function docSchema(schema: JsonSchema): DocSchema {
  const name = componentNames.get(schema);
  return name ? schemaRef(name) : schemaBody(schema);
}

/** The body of `schema` itself, its nested named schemas as `$ref`s (a component's own definition). */
export function schemaBody(schema: JsonSchema): DocSchemaObject {
  const { properties, items, additionalProperties, anyOf, ...plain } = schema;
  return {
    ...plain,
    ...(properties ? { properties: Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, docSchema(value)])) } : {}),
    ...(items ? { items: docSchema(items) } : {}),
    ...(additionalProperties !== undefined
      ? { additionalProperties: typeof additionalProperties === "boolean" ? additionalProperties : docSchema(additionalProperties) }
      : {}),
    ...(anyOf ? { anyOf: anyOf.map(docSchema) } : {}),
  };
}

/** The error answers an operation can give, each with the JSON error body. */
export const errorResponses = {
  BadRequest: "The request is not valid: a path or query parameter, the body, or the operation on this entity; the message says what is wrong.",
  BadRequestOrMissingFields:
    "The request is not valid (the message says what is wrong), or the provider type needs fields the request did not give: then the body is `{missingFields}`.",
  Unauthorized:
    "No identity (`Service-UserID` and `Service-TenantID`), an unknown tenant, no valid Bearer token (with security on), or a role that does not allow the call.",
  Forbidden: "The caller's role does not allow the call.",
  NotFound: "Nothing of that name or id, as far as the caller can see (another tenant's entities are never found).",
  Conflict: "The call conflicts with the current state (the entity exists already, is in use, or is busy).",
  PayloadTooLarge: "The body is larger than the gateway takes.",
  UpgradeRequired: "A request without a WebSocket upgrade on the WebSocket's path (`Upgrade: websocket` is required).",
  InternalError: "Something failed inside Corral; the message says no more.",
  Unavailable: "A service needed for the call is not running, or a limit (connections, capacity) is reached.",
  GatewayTimeout: "The service did not answer in time.",
} as const;

export type ErrorResponseName = keyof typeof errorResponses;

export const errorResponseStatus: Readonly<Record<ErrorResponseName, number>> = {
  BadRequest: 400,
  BadRequestOrMissingFields: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  PayloadTooLarge: 413,
  UpgradeRequired: 426,
  InternalError: 500,
  Unavailable: 503,
  GatewayTimeout: 504,
};

export interface DocResponse {
  description: string;
  headers?: Record<string, { description: string; schema: DocSchema }>;
  content?: Record<string, { schema: DocSchema }>;
}

const errorContent = (name: ErrorResponseName | undefined): DocResponse["content"] => ({
  "application/json": { schema: name === "BadRequestOrMissingFields" ? { anyOf: [schemaRef("Error"), schemaRef("MissingFields")] } : schemaRef("Error") },
});

/** The error responses as components: each the JSON error body (or, for missing provider fields, that body). */
export function errorResponseComponents(): Record<ErrorResponseName, DocResponse> {
  const names = Object.keys(errorResponses) as ErrorResponseName[];
  return Object.fromEntries(
    names.map((name): [ErrorResponseName, DocResponse] => [name, { description: errorResponses[name], content: errorContent(name) }]),
  ) as Record<ErrorResponseName, DocResponse>;
}

/**
 * An error answer one route gives for a reason of its own (`when`): with the JSON error body, and what the response
 * `implied` for every such route already says when the route gives that status for both.
 */
export function errorResponseWith(implied: ErrorResponseName | undefined, when: string): DocResponse {
  return { description: implied ? `${errorResponses[implied]} Also: ${when}` : when, content: errorContent(implied) };
}

export type SecuritySchemeName = "userId" | "tenantId" | "bearerToken";

/** How a caller says who it is: the identity headers always, and a Bearer token when security is on. */
export const securitySchemes = {
  userId: {
    type: "apiKey",
    in: "header",
    name: "Service-UserID",
    description: "The calling user. `admin` is its tenant's admin; `admin` of tenant `superadmin` administers every tenant.",
  },
  tenantId: { type: "apiKey", in: "header", name: "Service-TenantID", description: "The tenant the call acts in." },
  bearerToken: {
    type: "http",
    scheme: "bearer",
    description:
      "With `security.enabled`: a token from the auth service's `/token`; its user must be `Service-UserID`, and its roles, not the user name, decide admin rights.",
  },
} as const satisfies Record<SecuritySchemeName, Record<string, string>>;
