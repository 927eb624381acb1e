/**
 * Request/reply typed by the endpoint table (endpoints/table.ts): a service registers its handlers by endpoint name
 * and a caller names the endpoint it calls; subjects, queue groups and reply types all come from the table.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import {
  type RestBinding,
  type ServiceName,
  endpointList,
  endpoints,
  requestValidator,
  type DecodedRequestOf,
  type EndpointName,
  type Endpoints,
  type ReplyOf,
  type RequestOf,
  type ServedEndpointName,
  type ApiRequest,
  queues,
} from "@corral/contracts";
import type { Logger } from "./log.js";
import type { MetricsRegistry } from "./metrics/registry.js";
import { call, serve, type CallOptions, type Handler, type Served } from "./rpc.js";

/**
 * What the handler of endpoint `N` is given: the request validated against the row's declaration and decoded
 * (serveEndpoints does it before the handler runs); for a REST endpoint, the gateway's envelope so.
 */
export type HandlerRequest<N extends EndpointName> = DecodedRequestOf<N>;

export type EndpointHandler<N extends EndpointName> = (request: HandlerRequest<N>) => ReplyOf<N> | Promise<ReplyOf<N>>;

/** Handlers of some of service `S`'s endpoints, by endpoint name. */
export type EndpointHandlers<S extends ServiceName> = { [N in ServedEndpointName<S>]?: EndpointHandler<N> };

/** REST endpoints a service answers: every REST row but the gateway's own. */
export type RestServedEndpointName = {
  [N in ServedEndpointName]: Endpoints[N] extends { rest: RestBinding } ? N : never;
}[ServedEndpointName];

/** The services that answer endpoints on NATS (each has a queue group). */
export type ServingService = Exclude<ServiceName, "gateway">;

export interface ServeEndpointsOptions<S extends ServingService> {
  nc: NatsConnection;
  log: Logger;
  service: S;
  /** One handler for every endpoint of `service`, no more, no fewer (checked when serving starts). */
  handlers: EndpointHandlers<S>;
  /** Request durations per endpoint are counted here (see `serve`). @default not counted */
  metrics?: MetricsRegistry;
}

/** The subject of a served endpoint. */
function subjectOf(name: ServedEndpointName): string {
  const { subject } = endpoints[name] as { subject?: string };
  if (subject === undefined) throw new Error(`endpoint ${name} has no NATS subject`);
  return subject;
}

/**
 * Serves `service`'s endpoints in its queue group (see `serve`), each request checked against its row's declaration
 * first (validators compiled here, once): a request that breaks it is answered 400 naming the field, and the handler
 * gets it decoded. Throws when a handler is missing or names an endpoint of another service: a service answers
 * exactly its rows of the table.
 */
export function serveEndpoints<S extends ServingService>(options: ServeEndpointsOptions<S>): Served {
  const { nc, log, service } = options;
  const given = new Map<string, Handler>(Object.entries(options.handlers as Record<string, Handler>));
  const bySubject: Record<string, Handler> = {};
  const endpointNames: Record<string, string> = {};
  const missing: string[] = [];
  for (const { name, endpoint } of endpointList()) {
    if (endpoint.service !== service || endpoint.subject === undefined) continue;
    const handler = given.get(name);
    given.delete(name);
    if (handler) {
      const validate = requestValidator(endpoint);
      bySubject[endpoint.subject] = (request: unknown) => (handler as (request: unknown) => unknown)(validate(request));
      endpointNames[endpoint.subject] = name;
    } else missing.push(name);
  }
  if (missing.length > 0 || given.size > 0) {
    const problems = [
      ...(missing.length > 0 ? [`no handler for ${missing.join(", ")}`] : []),
      ...(given.size > 0 ? [`handlers of endpoints it does not own: ${[...given.keys()].join(", ")}`] : []),
    ];
    throw new Error(`service ${service}: ${problems.join("; ")}`);
  }
  return serve({ nc, queue: queues[service], log, handlers: bySubject, endpointNames, ...(options.metrics ? { metrics: options.metrics } : {}) });
}

/** Calls endpoint `name` and answers its reply, typed by the table; errors as `call` throws them. */
export function callEndpoint<N extends ServedEndpointName>(
  nc: NatsConnection,
  name: N,
  request: RequestOf<N>,
  options: CallOptions = {},
): Promise<ReplyOf<N>> {
  return call<ReplyOf<N>>(nc, subjectOf(name), request, options);
}

/**
 * Forwards a REST call to the service that answers endpoint `name`: the gateway's envelope with the body as the
 * client sent it (the service validates it, see serveEndpoints), the reply typed by the table.
 */
export function forwardRestCall<N extends RestServedEndpointName>(
  nc: NatsConnection,
  name: N,
  request: ApiRequest,
  options: CallOptions = {},
): Promise<ReplyOf<N>> {
  return call<ReplyOf<N>>(nc, subjectOf(name), request, options);
}
