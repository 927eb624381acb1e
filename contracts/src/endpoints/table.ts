/**
 * The endpoint table: every operation of Corral, one row each, keyed by its name (the path of its subject in
 * `subjects`). The gateway's router, each service's handler registration and every call between services are
 * derived from it (see serveEndpoints and callEndpoint in shared/src/endpoint-rpc.ts).
 *
 * Order matters only for REST: routes are listed (and `Allow` headers name methods) in table order.
 */
import type { ApiRequest } from "../api-request.js";
import { apiDocsEndpoints } from "./api-docs.js";
import { authEndpoints } from "./auth.js";
import { clusterEndpoints, clustersInternalEndpoints } from "./clusters.js";
import type { Endpoint, ServiceName } from "./endpoint.js";
import { gatewayEndpoints } from "./gateway.js";
import { metricEndpoints, metricsInternalEndpoints } from "./metrics.js";
import { pluginEndpoints, pluginsInternalEndpoints } from "./plugins.js";
import { solverEndpoints } from "./solver.js";
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
  ...tenancyInternalEndpoints,
  ...clustersInternalEndpoints,
  ...pluginsInternalEndpoints,
  ...metricsInternalEndpoints,
  ...authEndpoints,
  ...solverEndpoints,
} satisfies Record<string, Endpoint>;

export type Endpoints = typeof endpoints;
export type EndpointName = keyof Endpoints;

/** What a caller sends: for a REST endpoint, the gateway's envelope around its body. */
export type RequestOf<N extends EndpointName> = Endpoints[N] extends Endpoint<infer Request, unknown> ? Request : never;
/** The query parameters REST endpoint `N` reads, each as text when given (`{}`: none; `never`: not REST). */
export type QueryOf<N extends EndpointName> = RequestOf<N> extends ApiRequest<unknown, infer Query> ? Query : never;
/** What the endpoint answers (`void`: no body). */
export type ReplyOf<N extends EndpointName> = Endpoints[N] extends Endpoint<unknown, infer Reply> ? Reply : never;

/** Endpoints service `S` answers on a NATS subject. */
export type ServedEndpointName<S extends ServiceName = ServiceName> = {
  [N in EndpointName]: Endpoints[N] extends { service: S; subject: string } ? N : never;
}[EndpointName];

/** Every row, in table order, with its name. */
export function endpointList(): Array<{ name: EndpointName; endpoint: Endpoint }> {
  return (Object.keys(endpoints) as EndpointName[]).map((name) => ({ name, endpoint: endpoints[name] }));
}
