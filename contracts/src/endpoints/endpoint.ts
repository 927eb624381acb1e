import type { ApiRequest } from "../api-request.js";
import { boolean, type JsonSchema } from "./json-schema.js";

/** The processes that answer endpoints; `gateway` answers only what needs no service (`GET /status`). */
export type ServiceName = "gateway" | "tenancy" | "clusters" | "plugins" | "metrics" | "auth" | "solver";

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
 * One query parameter of a REST endpoint. Its value arrives as text: `schema` says what the text holds (an
 * integer's digits, `true` or `false`, an array's items separated by commas).
 */
export interface QueryParameter {
  description: string;
  schema: JsonSchema;
}

/** A REST endpoint's query parameters by name; every one is optional. */
export type QueryParameters = Readonly<Record<string, QueryParameter>>;

/** What a handler reads of the query: the declared parameters `Q`, each as text when given. */
export type QueryValues<Q extends string> = { readonly [K in Q]?: string };

/** How an endpoint is reached over REST. */
export interface RestBinding {
  /** Usually one; start, stop and restart of services have one for all services and one for a single service. */
  routes: readonly RestRoute[];
  access: Access;
  /** Status when the role does not allow the call: 401, except import and queue metrics 403 (docs/api.md). */
  denialStatus: 401 | 403;
  body: BodyKind;
  /**
   * The query parameters the endpoint reads (`{}`: none). The gateway forwards these and leaves out any other, so an
   * unknown parameter is ignored, as it always was.
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
  dryRunReply?: JsonSchema;
}

/**
 * How an event stream is reached: a long-lived `GET` answered with Server-Sent Events (`reply` is one event's
 * `data`), or a WebSocket (`request` is what the client sends, `reply` what the server sends).
 */
export interface StreamBinding {
  protocol: "sse" | "websocket";
  route: RestRoute;
  /** Who may open it; each event is further limited to what the caller may see. */
  access: Exclude<Access, "public">;
}

/**
 * One operation of Corral: which service answers it on which NATS subject, its REST routes if it has any, and what
 * goes in and comes out (JSON Schema for the wire, TypeScript types for the typed helpers).
 */
export interface Endpoint<Request = unknown, Reply = unknown> {
  service: ServiceName;
  /** NATS subject the service answers on; absent only for what the gateway answers itself. */
  subject?: string;
  /** Absent: internal, reached over NATS only. */
  rest?: RestBinding;
  /** An event stream the gateway serves itself (no `rest`, no `subject`). */
  stream?: StreamBinding;
  /** REST: the request body (absent when no body is read); internal: the NATS request. */
  request?: JsonSchema;
  /** `"empty"`: the answer has no body. */
  reply: JsonSchema | "empty";
  /** Never set: carries the request and reply types to the typed helpers. */
  readonly types?: { request: Request; reply: Reply };
}

/**
 * An endpoint with REST routes: its NATS request is the gateway's envelope around a `Body`, with the query parameters
 * named `Q`.
 */
export type RestEndpoint<Body, Reply, Q extends string = never> = Endpoint<ApiRequest<Body, QueryValues<Q>>, Reply> & {
  rest: RestBinding;
};

/** `route("GET", "/clusters/:id")`: a REST route with its path parameters read from the path. */
export function route(method: Method, path: string): RestRoute {
  const params = path
    .split("/")
    .filter((segment) => segment.startsWith(":"))
    .map((segment) => segment.slice(1));
  return { method, path, params };
}

/** `?dryRun=true`: the query parameter of every endpoint with a `dryRunReply`. */
export const dryRunParameter: QueryParameter = {
  description: "`true`: run the same checks and answer what would happen (layout and plan), creating, storing and counting nothing.",
  schema: boolean,
};

export interface RestEndpointDefinition<Q extends string = never> {
  subject: string;
  routes: readonly RestRoute[];
  access: RestAccess;
  /** @default 401 */
  denialStatus?: 401 | 403;
  body: BodyKind;
  /** Schema of the body; leave out for body `none`. */
  request?: JsonSchema;
  reply: JsonSchema | "empty";
  /** The query parameters it reads, besides `dryRun` (added with `dryRunReply`). */
  query?: Readonly<Record<Q, QueryParameter>>;
  /** What `?dryRun=true` answers; leave out when the endpoint has no dry run (name `"dryRun"` in the query type if given). */
  dryRunReply?: JsonSchema;
}

export interface InternalEndpointDefinition {
  subject: string;
  request: JsonSchema;
  reply: JsonSchema | "empty";
}

/** An endpoint a service answers on its subject. */
export type ServedEndpoint<S extends ServiceName, Request, Reply> = Endpoint<Request, Reply> & { service: S; subject: string };
/** A REST endpoint a service answers on its subject, reading the query parameters named `Q`. */
export type RestServedEndpoint<S extends ServiceName, Body, Reply, Q extends string = never> = ServedEndpoint<
  S,
  ApiRequest<Body, QueryValues<Q>>,
  Reply
> & { rest: RestBinding };

/** The roles a service's REST endpoint may require (only the gateway's own are public). */
export type RestAccess = Exclude<Access, "public">;

/** The definers of one service's endpoints; the service's name stays in their types (handlers are checked per service). */
export interface EndpointDefiners<S extends ServiceName> {
  /**
   * A REST endpoint whose body is a `Body` (`undefined` when none is read), whose answer is a `Reply` and which reads
   * the query parameters named `Q`.
   */
  rest<Body, Reply, Q extends string = never>(definition: RestEndpointDefinition<Q>): RestServedEndpoint<S, Body, Reply, Q>;
  /** A REST read: `GET path`, no body, refused with 401; it reads the query parameters `query` (named `Q`). */
  get<Reply, Q extends string = never>(
    subject: string,
    path: string,
    access: RestAccess,
    reply: JsonSchema,
    query?: Readonly<Record<Q, QueryParameter>>,
  ): RestServedEndpoint<S, undefined, Reply, Q>;
  /** A REST command without a body that answers nothing (delete, stage, sync, ...), refused with 401. */
  command(subject: string, method: Method, path: string, access: RestAccess): RestServedEndpoint<S, undefined, void>;
  /** An endpoint reached over NATS only, by other services. */
  internal<Request, Reply>(definition: InternalEndpointDefinition): ServedEndpoint<S, Request, Reply>;
}

export function endpointsOf<S extends Exclude<ServiceName, "gateway">>(service: S): EndpointDefiners<S> {
  const rest = <Body, Reply, Q extends string = never>(definition: RestEndpointDefinition<Q>): RestServedEndpoint<S, Body, Reply, Q> => {
    const { routes, access, denialStatus, body, dryRunReply, query, ...served } = definition;
    const binding: RestBinding = {
      routes,
      access,
      denialStatus: denialStatus ?? 401,
      body,
      query: { ...query, ...(dryRunReply ? { dryRun: dryRunParameter } : {}) },
      ...(dryRunReply ? { dryRunReply } : {}),
    };
    return { service, ...served, rest: binding };
  };
  return {
    rest,
    get: (subject, path, access, reply, query) =>
      rest({ subject, routes: [route("GET", path)], access, body: "none", reply, ...(query ? { query } : {}) }),
    command: (subject, method, path, access) => rest({ subject, routes: [route(method, path)], access, body: "none", reply: "empty" }),
    internal(definition) {
      return { service, ...definition };
    },
  };
}

/** An event stream the gateway serves itself. */
export function gatewayStream<Request, Reply>(definition: StreamBinding & { request?: JsonSchema; reply: JsonSchema }): Endpoint<Request, Reply> & {
  stream: StreamBinding;
} {
  const { request, reply, ...stream } = definition;
  return { service: "gateway", stream, ...(request ? { request } : {}), reply };
}

/** A public REST endpoint the gateway answers itself, without a service. */
export function gatewayEndpoint<Reply>(definition: {
  routes: readonly RestRoute[];
  reply: JsonSchema;
  withoutToken?: true;
}): RestEndpoint<undefined, Reply> & { service: "gateway" } {
  const { routes, reply, withoutToken } = definition;
  return {
    service: "gateway",
    rest: { routes, access: "public", denialStatus: 401, body: "none", query: {}, ...(withoutToken ? { withoutToken } : {}) },
    reply,
  };
}
