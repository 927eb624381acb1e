/**
 * The endpoint table: every operation of Corral, one row each, keyed by its name; a service answers it on the NATS
 * subject `corral.<name>`. The gateway's router, each service's handler registration and every call between services are
 * derived from it (see serveEndpoints and callEndpoint in shared/src/endpoint-rpc.ts).
 *
 * Order matters only for REST: routes are listed (and `Allow` headers name methods) in table order.
 */
import { apiDocsEndpoints } from "./api-docs.js";
import { auditEndpoints } from "./audit.js";
import { authEndpoints } from "./auth.js";
import { clusterEndpoints, clustersInternalEndpoints } from "./clusters.js";
import type {
  DecodedApiRequest,
  DecodedOf,
  Endpoint,
  RequestSchemas,
  RestBinding,
  RestEndpoint,
  ServiceName,
  WireApiRequest,
  WireOf,
} from "./endpoint.js";
import { gatewayEndpoints } from "./gateway.js";
import { metricEndpoints, metricsInternalEndpoints } from "./metrics.js";
import { pluginEndpoints, pluginsInternalEndpoints } from "./plugins.js";
import { endpointSubject } from "../subjects.js";
import { solverEndpoints } from "./solver.js";
import { webhookEndpoints, webhooksInternalEndpoints } from "./webhooks.js";
import { catalogEndpoints, hostPoolAndTransferEndpoints, tenancyInternalEndpoints, tenantEndpoints } from "./tenancy.js";

export const endpoints = {
  ...gatewayEndpoints,
  ...apiDocsEndpoints,
  ...tenantEndpoints,
  ...catalogEndpoints("providers"),
  ...catalogEndpoints("hardwaretypes"),
  ...catalogEndpoints("imagetypes"),
  ...catalogEndpoints("services"),
  ...catalogEndpoints("clustertemplates"),
  ...hostPoolAndTransferEndpoints,
  ...clusterEndpoints,
  ...pluginEndpoints,
  ...metricEndpoints,
  ...auditEndpoints,
  ...webhookEndpoints,
  ...tenancyInternalEndpoints,
  ...clustersInternalEndpoints,
  ...pluginsInternalEndpoints,
  ...metricsInternalEndpoints,
  ...webhooksInternalEndpoints,
  ...authEndpoints,
  ...solverEndpoints,
} satisfies Record<string, Endpoint>;

// A service subject is the endpoint's name under `corral.` (subjects.ts): checked once, when the table loads.
for (const [name, row] of Object.entries(endpoints) as Array<[string, Endpoint]>) {
  if (row.subject !== undefined && row.subject !== endpointSubject(name)) {
    throw new Error(`endpoint ${name} answers on ${row.subject}, not on ${endpointSubject(name)}`);
  }
}

export type Endpoints = typeof endpoints;
export type EndpointName = keyof Endpoints;

/** The request schemas of endpoint `N`. */
export type RequestSchemasOf<N extends EndpointName> = Endpoints[N] extends Endpoint<infer R, unknown> ? R : never;

/** What a caller sends: for a REST endpoint, the gateway's envelope around its wire body, the query as text. */
export type RequestOf<N extends EndpointName> = Endpoints[N] extends { rest: RestBinding }
  ? WireApiRequest<RequestSchemasOf<N>>
  : WireOf<RequestSchemasOf<N>["body"]>;

/**
 * What the handler of endpoint `N` gets: the request validated against its declaration and decoded (numeric strings
 * as numbers, `null` as absent); for a REST endpoint, the gateway's envelope with params, query and body so.
 */
export type DecodedRequestOf<N extends EndpointName> = Endpoints[N] extends RestEndpoint<infer R, infer K, unknown>
  ? DecodedApiRequest<R, K>
  : DecodedOf<RequestSchemasOf<N>["body"]>;

/** The query parameters REST endpoint `N` reads, decoded (`never`: not REST). */
export type QueryOf<N extends EndpointName> = DecodedRequestOf<N> extends { query: infer Q } ? Q : never;

/** What the endpoint answers (`void`: no body). */
export type ReplyOf<N extends EndpointName> = Endpoints[N] extends Endpoint<RequestSchemas, infer Reply> ? Reply : never;

/** Endpoints service `S` answers on a NATS subject. */
export type ServedEndpointName<S extends ServiceName = ServiceName> = {
  [N in EndpointName]: Endpoints[N] extends { service: S; subject: string } ? N : never;
}[EndpointName];

/** Every row, in table order, with its name. */
export function endpointList(): Array<{ name: EndpointName; endpoint: Endpoint }> {
  return (Object.keys(endpoints) as EndpointName[]).map((name) => ({ name, endpoint: endpoints[name] }));
}
