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
  type EndpointName,
  type Endpoints,
  type QueryOf,
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
 * What the handler of endpoint `N` is given. A REST endpoint's body arrives as the client sent it (the gateway
 * checks only that it is JSON), so its handler validates it, as it does the query parameters its row declares (the
 * only ones it can read); an internal endpoint's request is what callers send.
 */
export type HandlerRequest<N extends EndpointName> = Endpoints[N] extends { rest: RestBinding } ? ApiRequest<unknown, QueryOf<N>> : RequestOf<N>;

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
 * Serves `service`'s endpoints in its queue group (see `serve`). Throws when a handler is missing or names an
 * endpoint of another service: a service answers exactly its rows of the table.
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
      bySubject[endpoint.subject] = handler;
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
 * client sent it (the service's handler validates it, see HandlerRequest), the reply typed by the table.
 */
export function forwardRestCall<N extends RestServedEndpointName>(
  nc: NatsConnection,
  name: N,
  request: ApiRequest,
  options: CallOptions = {},
): Promise<ReplyOf<N>> {
  return call<ReplyOf<N>>(nc, subjectOf(name), request, options);
}
