/**
 * The OpenAPI 3.1 description of the REST API, derived from the endpoint table the gateway routes by: every REST
 * route of the table is one operation (and nothing else is), with its request and reply schemas, the roles that
 * may call it and the error answers it can give. Pure: the gateway computes it once and serves it at
 * `GET /v2/openapi.json`.
 */
import type { Access, Endpoint, RestBinding, RestRoute, StreamBinding } from "./endpoint.js";
import {
  docSchema,
  errorResponseComponents,
  errorResponseStatus,
  errorResponseWith,
  namedSchemas,
  schemaBody,
  securitySchemes,
  type DocResponse,
  type DocSchema,
  type ErrorResponseName,
  type SecuritySchemeName,
} from "./openapi-components.js";
import type { JsonSchema } from "./json-schema.js";
import { primaryForm } from "../validation/fields.js";
import { endpointList, type EndpointName } from "./table.js";

export interface OpenApiOptions {
  /** The path every route is under, e.g. `/v2`: the document's server URL. */
  basePath: string;
  /** The document's `info.version`. */
  version: string;
}

type SecurityRequirement = Partial<Record<SecuritySchemeName, string[]>>;

export interface DocParameter {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  description?: string;
  /** For an array: `form` without `explode`, its items separated by commas in one value (`?status=a,b`). */
  style?: "form";
  explode?: false;
  schema: DocSchema;
}

export interface DocOperation {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  parameters?: DocParameter[];
  requestBody?: { required: boolean; content: Record<string, { schema: DocSchema }> };
  responses: Record<string, DocResponse | { $ref: string }>;
  security: SecurityRequirement[];
  /** The roles that may call the operation (`[]`: anyone, without identity). */
  "x-corral-roles": readonly string[];
  /** The row of the endpoint table (contracts/src/endpoints/table.ts) the operation comes from. */
  "x-corral-endpoint": EndpointName;
  /** A WebSocket: the messages each side sends (OpenAPI 3.1 has no way to say it). */
  "x-corral-websocket"?: { send: DocSchema; receive: DocSchema };
}

export type DocMethod = "get" | "post" | "put" | "delete";

export interface OpenApiDocument {
  openapi: "3.1.0";
  info: { title: string; version: string; description: string };
  servers: Array<{ url: string; description: string }>;
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, Partial<Record<DocMethod, DocOperation>>>;
  components: {
    schemas: Record<string, DocSchema>;
    responses: Record<ErrorResponseName, DocResponse>;
    securitySchemes: typeof securitySchemes;
  };
}

const rolesOf: Readonly<Record<Access, readonly string[]>> = {
  public: [],
  user: ["user", "admin", "superadmin"],
  admin: ["admin", "superadmin"],
  superadmin: ["superadmin"],
};

const whoMayCall: Readonly<Record<Access, string>> = {
  public: "Anyone.",
  user: "Any user of the tenant; sees only what its role lets it see.",
  admin: "The tenant's admin (or the superadmin).",
  superadmin: "The superadmin only (`admin` of tenant `superadmin`).",
};

const identity: SecurityRequirement = { userId: [], tenantId: [] };

/** Identity headers alone (security off), or with a Bearer token (security on); none for what needs no token. */
function securityOf(rest: RestBinding): SecurityRequirement[] {
  if (rest.withoutToken) return [];
  if (rest.access === "public") return [{}, { bearerToken: [] }];
  return [identity, { ...identity, bearerToken: [] }];
}

/** `/clusters/:id` -> `/clusters/{id}`. */
export const openApiPath = (path: string): string =>
  path
    .split("/")
    .map((segment) => (segment.startsWith(":") ? `{${segment.slice(1)}}` : segment))
    .join("/");

/** The media types of a body or reply: raw content when the schema names one, else JSON. */
function contentOf(schema: JsonSchema): Record<string, { schema: DocSchema }> {
  const raw = schema.contentMediaType ? [schema] : schema.anyOf?.every((s) => s.contentMediaType) ? schema.anyOf : undefined;
  if (!raw) return { "application/json": { schema: docSchema(schema) } };
  return Object.fromEntries(raw.map((s) => [s.contentMediaType, { schema: docSchema(s) }]));
}

const takesProviderFields = (endpoint: Endpoint): boolean => bodyOf(endpoint)?.properties?.["providerFields"] !== undefined;

/** The JSON body (or upload bytes) the row declares, as plain JSON Schema. */
const bodyOf = (endpoint: Endpoint): JsonSchema | undefined => endpoint.request.body as JsonSchema | undefined;

/**
 * The error answers one route can give, from what the gateway and the services check: a body, path or query to
 * validate (400, or 413 for a body), the identity and role (401, or 403 where the table says), a named entity
 * (404), a change (409), a service behind it (503 and 504).
 */
function errorsOf(endpoint: Endpoint, rest: RestBinding, route: RestRoute): ErrorResponseName[] {
  if (rest.withoutToken) return route.params.length > 0 ? ["NotFound"] : [];
  // /status: 401 without a token (security on), 503 until the system can serve a request.
  if (rest.access === "public") return ["Unauthorized", "Unavailable"];
  const validated = rest.body !== "none" || route.params.length > 0 || Object.keys(rest.query).length > 0;
  const errors: Array<ErrorResponseName | false> = [
    validated && (takesProviderFields(endpoint) ? "BadRequestOrMissingFields" : "BadRequest"),
    "Unauthorized",
    rest.denialStatus === 403 && "Forbidden",
    route.params.length > 0 && "NotFound",
    route.method !== "GET" && "Conflict",
    rest.body !== "none" && "PayloadTooLarge",
    "InternalError",
    "Unavailable",
    "GatewayTimeout",
  ];
  return errors.filter((e): e is ErrorResponseName => e !== false);
}

/** How a query parameter holding an array is written: one value, its items separated by commas. */
const commaSeparated = { style: "form", explode: false } as const;

/** The path parameters of the route, then the query parameters of the row (each optional), as their text says them. */
function parametersOf(endpoint: Endpoint, rest: RestBinding, route: RestRoute): DocParameter[] {
  const query = Object.entries(rest.query).map(
    ([name, { description, schema }]): DocParameter => ({
      name,
      in: "query",
      required: false,
      description,
      ...(schema.type === "array" ? commaSeparated : {}),
      schema: docSchema(primaryForm(schema)),
    }),
  );
  return [...pathParameters(route, endpoint.request.params as JsonSchema | undefined), ...query];
}

function requestBodyOf(endpoint: Endpoint, rest: RestBinding): DocOperation["requestBody"] {
  const body = bodyOf(endpoint);
  if (rest.body === "none" || !body) return undefined;
  return { required: rest.body !== "optional", content: contentOf(body) };
}

function successOf(name: EndpointName, endpoint: Endpoint, rest: RestBinding): DocResponse {
  const reply = endpoint.reply === "empty" ? undefined : (endpoint.reply as JsonSchema);
  const dryRun = rest.dryRunReply as JsonSchema | undefined;
  if (!reply) {
    // One status cannot say "no body, or else this JSON": a validator then refuses one of the two answers.
    if (dryRun) throw new Error(`endpoint ${name}: a dry run's JSON answer needs a JSON answer for the real request too`);
    return { description: "Done; no body." };
  }
  const content = contentOf(dryRun ? { anyOf: [reply, dryRun] } : reply);
  return { description: dryRun ? "The answer; with `?dryRun=true`, what would happen." : "The answer.", content };
}

/** The route's error answers: those its binding implies, then those its row adds (each saying when). */
function errorAnswersOf(endpoint: Endpoint, rest: RestBinding, route: RestRoute): DocOperation["responses"] {
  const answers: DocOperation["responses"] = {};
  for (const error of errorsOf(endpoint, rest, route)) answers[String(errorResponseStatus[error])] = { $ref: `#/components/responses/${error}` };
  for (const [status, when] of Object.entries(rest.errors ?? {})) {
    const implied = errorsOf(endpoint, rest, route).find((error) => String(errorResponseStatus[error]) === status);
    answers[status] = errorResponseWith(implied, when);
  }
  return Object.fromEntries(Object.entries(answers).sort(([a], [b]) => Number(a) - Number(b)));
}

function operationOf(name: EndpointName, endpoint: Endpoint, rest: RestBinding, route: RestRoute, index: number): DocOperation {
  const parameters = parametersOf(endpoint, rest, route);
  const requestBody = requestBodyOf(endpoint, rest);
  return {
    // A second route of the same row (start/stop/restart of one service) gets its own id.
    operationId: index === 0 ? name : `${name}.${index + 1}`,
    summary: name,
    description: `${whoMayCall[rest.access]}${rest.body === "upload" ? " The body is the raw bytes of the file." : ""}`,
    tags: [endpoint.service],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: { "200": successOf(name, endpoint, rest), ...errorAnswersOf(endpoint, rest, route) },
    security: securityOf(rest),
    "x-corral-roles": rolesOf[rest.access],
    "x-corral-endpoint": name,
  };
}

/** The route's path parameters, each with the rule its row declares (any text when none). */
const pathParameters = (route: RestRoute, declared?: JsonSchema): DocParameter[] =>
  route.params.map((name) => {
    const schema = declared?.properties?.[name];
    return { name, in: "path", required: true, schema: schema ? docSchema(primaryForm(schema)) : { type: "string" } };
  });

/** Where a Server-Sent Events client resumes: after the event of this id (the events stream's sequence). */
const resumeParameters: DocParameter[] = [
  { name: "Last-Event-ID", in: "header", required: false, description: "Resume after this event id (sent by EventSource on reconnect).", schema: { type: "string" } },
  { name: "since", in: "query", required: false, description: "Resume after this event id, for clients that cannot set the header.", schema: { type: "string" } },
];

const sseErrors: ErrorResponseName[] = ["BadRequest", "Unauthorized", "NotFound", "InternalError", "Unavailable"];
const socketErrors: ErrorResponseName[] = ["Unauthorized", "UpgradeRequired", "InternalError", "Unavailable"];

/** A live event stream: a long-lived `GET` answered with Server-Sent Events, or upgraded to a WebSocket. */
function streamOperationOf(name: EndpointName, endpoint: Endpoint, stream: StreamBinding): DocOperation {
  const { route } = stream;
  const reply = endpoint.reply === "empty" ? {} : endpoint.reply;
  const sse = stream.protocol === "sse";
  const success: Record<string, DocResponse> = sse
    ? {
        "200": {
          description:
            "Server-Sent Events, until the client goes: each event's `data` is one JSON value of this schema and its `id` the id to resume after. A client too slow to keep up is closed with a last event saying so.",
          content: { "text/event-stream": { schema: docSchema(reply) } },
        },
      }
    : {
        "101": {
          description:
            "Switching Protocols: a WebSocket. The client sends JSON messages of `x-corral-websocket.send` (subscribe, unsubscribe); the server sends those of `x-corral-websocket.receive`.",
        },
      };
  const errors = (sse ? sseErrors : socketErrors).map((error) => [
    String(errorResponseStatus[error]),
    { $ref: `#/components/responses/${error}` },
  ]);
  const parameters = [...pathParameters(route, endpoint.request.params as JsonSchema | undefined), ...(sse ? resumeParameters : [])];
  return {
    operationId: name,
    summary: name,
    description: `${whoMayCall[stream.access]} Each event is one the caller may see: its own clusters, or (a tenant admin) its tenant's.`,
    tags: ["events"],
    ...(parameters.length > 0 ? { parameters } : {}),
    responses: { ...success, ...Object.fromEntries(errors) },
    security: [identity, { ...identity, bearerToken: [] }],
    "x-corral-roles": rolesOf[stream.access],
    "x-corral-endpoint": name,
    ...(sse ? {} : { "x-corral-websocket": { send: docSchema(bodyOf(endpoint) ?? {}), receive: docSchema(reply) } }),
  };
}

const serviceTags: ReadonlyArray<{ name: string; description: string }> = [
  { name: "gateway", description: "Answered by the gateway itself: liveness, this description and its browsable docs." },
  { name: "tenancy", description: "Tenants, provisioners, the catalog, export and import, hostpool hosts." },
  { name: "clusters", description: "Clusters, their plans, configuration, services and node properties." },
  { name: "plugins", description: "Plugin types and their resources." },
  { name: "metrics", description: "Queue depths and node usage." },
  { name: "webhooks", description: "Endpoints told of a tenant's cluster events and audit entries by signed HTTP POSTs." },
  { name: "events", description: "Live events of clusters: status, progress, plan stages, tasks, leases." },
];

const description = [
  "Corral's REST API. Every route is also answered to `HEAD` (as `GET`, without a body); `/status` is also served outside the version segment.",
  "Identity: the `Service-UserID` and `Service-TenantID` headers; with security on, also `Authorization: Bearer <token>`.",
  "Roles (`x-corral-roles`): `user` is any user of a tenant, `admin` the tenant's admin, `superadmin` the admin of tenant `superadmin`.",
  "Every error answer is JSON: `{status, error, message, details?}`.",
  "Besides the answers each operation lists, a request can be refused before it reaches an operation: 404 for a path no operation has, 405 (with `Allow`) for a method its path does not take, 400 or 501 for a body framing the gateway cannot trust (conflicting `Content-Length` headers, a transfer coding other than chunked).",
].join("\n\n");

/** The OpenAPI 3.1 document of every REST route and event stream of the endpoint table, in table order. */
export function openApiDocument(options: OpenApiOptions): OpenApiDocument {
  const paths: OpenApiDocument["paths"] = {};
  const add = (route: RestRoute, operation: DocOperation) => {
    (paths[openApiPath(route.path)] ??= {})[route.method.toLowerCase() as DocMethod] = operation;
  };
  for (const { name, endpoint } of endpointList()) {
    const { rest, stream } = endpoint;
    rest?.routes.forEach((route, index) => add(route, operationOf(name, endpoint, rest, route, index)));
    if (stream) add(stream.route, streamOperationOf(name, endpoint, stream));
  }
  return {
    openapi: "3.1.0",
    info: { title: "Corral", version: options.version, description },
    servers: [{ url: options.basePath, description: "This gateway" }],
    tags: [...serviceTags],
    paths,
    components: {
      schemas: Object.fromEntries(namedSchemas.map(([schemaName, schema]) => [schemaName, schemaBody(schema)])),
      responses: errorResponseComponents(),
      securitySchemes,
    },
  };
}
