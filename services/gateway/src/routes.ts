import { endpointList, type Access, type BodyKind, type EndpointName, type Endpoints, type Method, type RestBinding } from "@corral/contracts";
import type { RestServedEndpointName } from "@corral/shared";

export type { Access, BodyKind, Method };

/** What every REST route has: a method and path of a row of the endpoint table (contracts/src/endpoints), flattened for the router. */
interface RouteBasics {
  method: Method;
  /** Path under the version segment; `:name` segments become params. */
  pattern: string;
  /** Status when the role does not allow the call: 401, except import and queue metrics 403 (docs/api.md). */
  denialStatus: 401 | 403;
  body: BodyKind;
}

/** The REST endpoints the gateway answers itself, without a service. */
export type GatewayRestEndpointName = {
  [N in EndpointName]: Endpoints[N] extends { service: "gateway"; rest: RestBinding } ? N : never;
}[EndpointName];

/** A route the gateway answers itself (`GET /status`, the API description and its docs): public. */
export interface GatewayRoute extends RouteBasics {
  access: "public";
  /** The endpoint the route belongs to. */
  endpoint: GatewayRestEndpointName;
  /** Answered without a Bearer token even with security on. */
  withoutToken: boolean;
}

/** A route forwarded to the service that answers its endpoint. */
export interface ServiceRoute extends RouteBasics {
  access: Exclude<Access, "public">;
  /** The endpoint the route belongs to, and the call is forwarded to. */
  endpoint: RestServedEndpointName;
  /** The query parameters the endpoint reads (RestBinding.query): the only ones forwarded. */
  query: readonly string[];
}

export type Route = GatewayRoute | ServiceRoute;

/** Every REST route of the endpoint table, in table order: method + path -> owning service endpoint and required role. */
export function apiRoutes(): Route[] {
  return endpointList().flatMap(({ name, endpoint }) => {
    const rest = endpoint.rest;
    if (!rest) return [];
    return rest.routes.map((r): Route => {
      const basics = { method: r.method, pattern: r.path, denialStatus: rest.denialStatus, body: rest.body };
      // Public rows are the gateway's own (contracts/test/endpoints.test.ts); TypeScript cannot narrow a name by its row.
      if (rest.access === "public") return { ...basics, access: rest.access, endpoint: name as GatewayRestEndpointName, withoutToken: rest.withoutToken === true };
      if (endpoint.subject === undefined) throw new Error(`endpoint ${name} is neither public nor answered on a subject`);
      // A REST row with a subject is what RestServedEndpointName names; TypeScript cannot narrow a name by its row.
      return { ...basics, access: rest.access, endpoint: name as RestServedEndpointName, query: Object.keys(rest.query) };
    });
  });
}
