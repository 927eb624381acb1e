import { Type, type Static, type StaticDecode, type TObject, type TOptional, type TSchema, type TString } from "@sinclair/typebox";
import type { ApiRequest, Identity } from "../api-request.js";
import type { JsonSchema } from "./json-schema.js";

/** The processes that answer endpoints; `gateway` answers only what needs no service (`GET /status`). */
export type ServiceName = "gateway" | "tenancy" | "clusters" | "plugins" | "metrics" | "auth" | "solver" | "webhooks";

/** Who may call a REST endpoint. `public` needs no identity. */
export type Access = "public" | "user" | "admin" | "superadmin";
export type Method = "GET" | "POST" | "PUT" | "DELETE";
/**
 * `json`: a JSON body is required; `optional`: JSON if present; `none`: any body is ignored; `upload`: raw bytes,
 * streamed into the uploads object store (never held whole in memory) and handed over by name.
 */
export type BodyKind = "json" | "optional" | "none" | "upload";

/** One method and path of a REST endpoint. */
export interface RestRoute {
  method: Method;
  /** Path under the version segment; `:name` segments are path parameters. */
  path: string;
  /** Names of the path parameters, in path order. */
  params: readonly string[];
}

/**
 * What an endpoint takes, declared once as schemas: the services validate every request against them (serveEndpoints
 * in shared/src/endpoint-rpc.ts), the API description prints them, and the handlers' and callers' types come from them.
 */
export interface RequestSchemas {
  /** REST: the path parameters by name (each route's `:name` segments). */
  params?: TObject;
  /**
   * REST: the query parameters by name, every one optional. Each schema says what its text holds, as OpenAPI
   * serialises it: `true`/`false` for a boolean, digits for an integer, comma-separated items for an array.
   */
  query?: TObject;
  /** REST: the JSON body (absent: none is read; upload rows: the bytes); internal: the NATS request; WebSocket: what a client sends. */
  body?: TSchema;
}

/** One query parameter of a REST endpoint, as the API description shows it (derived from `request.query`). */
export interface QueryParameter {
  description: string;
  schema: JsonSchema;
}

/** A REST endpoint's query parameters by name; every one is optional. */
export type QueryParameters = Readonly<Record<string, QueryParameter>>;

/** Error answers a route gives beyond those its binding implies, each with when it is given (the API description lists them). */
export type ErrorAnswers = Partial<Record<400 | 403 | 404 | 405 | 409, string>>;

/** How an endpoint is reached over REST. */
export interface RestBinding {
  /** Usually one; start, stop and restart of services have one for all services and one for a single service. */
  routes: readonly RestRoute[];
  access: Access;
  /** Status when the role does not allow the call: 401, except import and queue metrics 403 (docs/api.md). */
  denialStatus: 401 | 403;
  body: BodyKind;
  /**
   * The query parameters the endpoint reads (`{}`: none), from `request.query`. The gateway forwards these and leaves
   * out any other, so an unknown parameter is ignored, as it always was.
   */
  query: QueryParameters;
  /**
   * Served without a Bearer token even with security on (public only): the API description and its docs hold
   * nothing secret, and a browser opening the docs sends no token.
   */
  withoutToken?: true;
  /**
   * The endpoint takes `?dryRun=true` (like `terraform plan`): it then runs the same checks and answers this
   * instead of `reply`, creating, storing and counting nothing.
   */
  dryRunReply?: TSchema;
  errors?: ErrorAnswers;
}

/**
 * How an event stream is reached: a long-lived `GET` answered with Server-Sent Events (`reply` is one event's
 * `data`), or a WebSocket (`request.body` is what the client sends, `reply` what the server sends).
 */
export interface StreamBinding {
  protocol: "sse" | "websocket";
  route: RestRoute;
  /** Who may open it; each event is further limited to what the caller may see. */
  access: Exclude<Access, "public">;
}

/**
 * One operation of Corral: which service answers it on which NATS subject, its REST routes if it has any, and what
 * goes in and comes out (schemas for the wire, from which the TypeScript types are derived).
 */
export interface Endpoint<R extends RequestSchemas = RequestSchemas, Reply = unknown> {
  service: ServiceName;
  /** NATS subject the service answers on (`corral.<endpoint name>`); absent only for what the gateway answers itself. */
  subject?: string;
  /** Absent: internal, reached over NATS only. */
  rest?: RestBinding;
  /** An event stream the gateway serves itself (no `rest`, no `subject`). */
  stream?: StreamBinding;
  request: R;
  /** `"empty"`: the answer has no body. */
  reply: TSchema | "empty";
  /** Never set: carries the reply type to the typed helpers. */
  readonly types?: { reply: Reply };
}

/** The value a schema describes on the wire (`undefined`: none declared). */
export type WireOf<S> = S extends TSchema ? Static<S> : undefined;
/** The value a handler gets once the schema validated and decoded it (`undefined`: none declared). */
export type DecodedOf<S> = S extends TSchema ? StaticDecode<S> : undefined;

/** Path parameters as a handler reads them: declared ones typed, text otherwise. */
type ParamsOf<R extends RequestSchemas> = R["params"] extends TObject ? StaticDecode<R["params"]> : Readonly<Record<string, string>>;
type QueryOfSchemas<R extends RequestSchemas> = R["query"] extends TObject ? StaticDecode<R["query"]> : Readonly<Record<string, never>>;

/** What a REST handler gets: the gateway's envelope with params, query and body validated and decoded. */
export interface DecodedApiRequest<R extends RequestSchemas, K extends BodyKind> {
  identity: Identity;
  params: ParamsOf<R>;
  query: QueryOfSchemas<R>;
  body: K extends "json" ? DecodedOf<R["body"]> : K extends "optional" ? DecodedOf<R["body"]> | undefined : undefined;
  /** For upload routes: the raw body, already streamed into the uploads object store; the service owns it. */
  upload?: { object: string; size: number };
}

/** The query text a REST caller sends: the declared parameters, each as text. */
export type QueryTextOf<R extends RequestSchemas> = R["query"] extends TObject ? { readonly [K in keyof Static<R["query"]>]?: string } : {};

/**
 * An endpoint with REST routes: its NATS request is the gateway's envelope around the body, its handler gets the
 * envelope decoded. `K` is its body kind.
 */
export type RestEndpoint<R extends RequestSchemas, K extends BodyKind, Reply> = Endpoint<R, Reply> & {
  rest: RestBinding;
  /** Never set: the body kind, for the handler's type. */
  readonly bodyKind?: K;
};

/** `route("GET", "/clusters/:id")`: a REST route with its path parameters read from the path. */
export function route(method: Method, path: string): RestRoute {
  const params = path
    .split("/")
    .filter((segment) => segment.startsWith(":"))
    .map((segment) => segment.slice(1));
  return { method, path, params };
}

/** `?dryRun=true`: the query parameter of every endpoint with a `dryRunReply`; merge it into the row's `query`. */
export const dryRunQuery = {
  dryRun: Type.Optional(
    Type.Boolean({
      description: "`true`: run the same checks and answer what would happen (layout and plan), creating, storing and counting nothing.",
    }),
  ),
};

/** Path parameters every route of `routes` names are required; one only some name is optional. Each any text. */
export function routeParams(routes: readonly RestRoute[]): TObject<Record<string, TString | TOptional<TString>>> {
  const names = [...new Set(routes.flatMap((r) => r.params))];
  return Type.Object(
    Object.fromEntries(names.map((name) => [name, routes.every((r) => r.params.includes(name)) ? Type.String() : Type.Optional(Type.String())])),
  );
}

/** The row's query parameters as the API description lists them. */
function queryParameters(query: TObject | undefined): QueryParameters {
  const properties = (query?.properties ?? {}) as Record<string, TSchema>;
  return Object.fromEntries(
    Object.entries(properties).map(([name, schema]) => [name, { description: String(schema.description ?? ""), schema: schema as JsonSchema }]),
  );
}

/** The roles a service's REST endpoint may require (only the gateway's own are public). */
export type RestAccess = Exclude<Access, "public">;

export interface RestEndpointDefinition<K extends BodyKind, R extends RequestSchemas, Rp extends TSchema | "empty", D extends TSchema | undefined> {
  subject: string;
  routes: readonly RestRoute[];
  access: RestAccess;
  /** @default 401 */
  denialStatus?: 401 | 403;
  body: K;
  /** Params default to the routes' (any text); `query` must hold `dryRun` (dryRunQuery) exactly when `dryRunReply` is given. */
  request?: R;
  reply: Rp;
  /** What `?dryRun=true` answers; leave out when the endpoint has no dry run. */
  dryRunReply?: D;
  errors?: ErrorAnswers;
}

/** The reply a handler answers: the reply schema's value (nothing for `"empty"`) or, on a dry run, the dry run's. */
export type ReplyFor<Rp, D> = (Rp extends TSchema ? Static<Rp> : void) | (D extends TSchema ? Static<D> : never);

export interface InternalEndpointDefinition<B extends TSchema, Rp extends TSchema | "empty"> {
  subject: string;
  request: B;
  reply: Rp;
}

/** An endpoint a service answers on its subject. */
export type ServedEndpoint<S extends ServiceName, R extends RequestSchemas, Reply> = Endpoint<R, Reply> & { service: S; subject: string };
/** A REST endpoint a service answers on its subject. */
export type RestServedEndpoint<S extends ServiceName, R extends RequestSchemas, K extends BodyKind, Reply> = ServedEndpoint<S, R, Reply> &
  RestEndpoint<R, K, Reply>;

/** Options of the get and command shorthands. */
export interface ShorthandOptions<Q extends TObject | undefined, P extends TObject | undefined> {
  query?: Q;
  params?: P;
  errors?: ErrorAnswers;
}

type Declared<P, Q> = (P extends TObject ? { params: P } : {}) & (Q extends TObject ? { query: Q } : {});

/** The definers of one service's endpoints; the service's name stays in their types (handlers are checked per service). */
export interface EndpointDefiners<S extends ServiceName> {
  /** A REST endpoint: its request declared by `request`, its answer by `reply` (and `dryRunReply`). */
  rest<const K extends BodyKind, R extends RequestSchemas = {}, Rp extends TSchema | "empty" = "empty", D extends TSchema | undefined = undefined>(
    definition: RestEndpointDefinition<K, R, Rp, D>,
  ): RestServedEndpoint<S, R, K, ReplyFor<Rp, D>>;
  /** A REST read: `GET path`, no body, refused with 401. */
  get<Rp extends TSchema, Q extends TObject | undefined = undefined, P extends TObject | undefined = undefined>(
    subject: string,
    path: string,
    access: RestAccess,
    reply: Rp,
    options?: ShorthandOptions<Q, P>,
  ): RestServedEndpoint<S, Declared<P, Q>, "none", Static<Rp>>;
  /** A REST command without a body that answers nothing (delete, stage, sync, ...), refused with 401. */
  command<P extends TObject | undefined = undefined>(
    subject: string,
    method: Method,
    path: string,
    access: RestAccess,
    options?: ShorthandOptions<undefined, P>,
  ): RestServedEndpoint<S, Declared<P, undefined>, "none", void>;
  /** An endpoint reached over NATS only, by other services. */
  internal<B extends TSchema, Rp extends TSchema | "empty">(
    definition: InternalEndpointDefinition<B, Rp>,
  ): ServedEndpoint<S, { body: B }, Rp extends TSchema ? Static<Rp> : void>;
}

export function endpointsOf<S extends Exclude<ServiceName, "gateway">>(service: S): EndpointDefiners<S> {
  const rest = <const K extends BodyKind, R extends RequestSchemas, Rp extends TSchema | "empty", D extends TSchema | undefined>(
    definition: RestEndpointDefinition<K, R, Rp, D>,
  ): RestServedEndpoint<S, R, K, ReplyFor<Rp, D>> => {
    const { subject, routes, access, denialStatus, body, dryRunReply, errors, reply } = definition;
    const request = { ...definition.request } as R;
    const declared = request.query?.properties as Record<string, TSchema> | undefined;
    if ((declared?.["dryRun"] !== undefined) !== (dryRunReply !== undefined)) {
      throw new Error(`endpoint ${subject}: the query declares dryRun exactly when a dryRunReply is given`);
    }
    const binding: RestBinding = {
      routes,
      access,
      denialStatus: denialStatus ?? 401,
      body,
      query: queryParameters(request.query),
      ...(dryRunReply ? { dryRunReply } : {}),
      ...(errors ? { errors } : {}),
    };
    return { service, subject, rest: binding, request: { ...request, params: request.params ?? routeParams(routes) }, reply };
  };
  return {
    rest,
    get: (subject, path, access, reply, options = {}) =>
      rest({
        subject,
        routes: [route("GET", path)],
        access,
        body: "none",
        reply,
        request: declared(options),
        ...(options.errors ? { errors: options.errors } : {}),
      }) as never,
    command: (subject, method, path, access, options = {}) =>
      rest({
        subject,
        routes: [route(method, path)],
        access,
        body: "none",
        reply: "empty",
        request: declared(options),
        ...(options.errors ? { errors: options.errors } : {}),
      }) as never,
    internal(definition) {
      const { subject, request, reply } = definition;
      return { service, subject, request: { body: request }, reply };
    },
  };
}

function declared(options: { query?: TObject | undefined; params?: TObject | undefined }): RequestSchemas {
  return { ...(options.query ? { query: options.query } : {}), ...(options.params ? { params: options.params } : {}) };
}

/** An event stream the gateway serves itself. */
export function gatewayStream<B extends TSchema | undefined, Rp extends TSchema>(
  definition: StreamBinding & { request?: B; reply: Rp },
): Endpoint<B extends TSchema ? { body: B } : {}, Static<Rp>> & { stream: StreamBinding } {
  const { request, reply, ...stream } = definition;
  return { service: "gateway", stream, request: (request ? { body: request } : {}) as B extends TSchema ? { body: B } : {}, reply };
}

/** A public REST endpoint the gateway answers itself, without a service. */
export function gatewayEndpoint<Rp extends TSchema>(definition: {
  routes: readonly RestRoute[];
  reply: Rp;
  withoutToken?: true;
}): RestEndpoint<{ params: TObject }, "none", Static<Rp>> & { service: "gateway" } {
  const { routes, reply, withoutToken } = definition;
  return {
    service: "gateway",
    rest: { routes, access: "public", denialStatus: 401, body: "none", query: {}, ...(withoutToken ? { withoutToken } : {}) },
    request: { params: routeParams(routes) },
    reply,
  };
}

/** The NATS request of a REST endpoint: the gateway's envelope around the wire body, with the query as text. */
export type WireApiRequest<R extends RequestSchemas> = ApiRequest<WireOf<R["body"]>, QueryTextOf<R>>;
