import { endpointList, type Access, type BodyKind, type EndpointName, type Method } from "@corral/contracts";

export type { Access, BodyKind, Method };

/** One REST route: a method and path of a row of the endpoint table (shared/src/endpoints), flattened for the router. */
export interface Route {
  method: Method;
  /** Path under the version segment; `:name` segments become params. */
  pattern: string;
  /** NATS subject of the owning service; `undefined` for routes the gateway answers itself. */
  subject?: string;
  access: Access;
  /** Status when the role does not allow the call (spec: 401, except import and metrics queues: 403). */
  denialStatus: 401 | 403;
  body: BodyKind;
  /** The endpoint the route belongs to. */
  endpoint: EndpointName;
}

/** Every REST route of the endpoint table, in table order: method + path -> owning service subject and required role. */
export function apiRoutes(): Route[] {
  return endpointList().flatMap(({ name, endpoint }) => {
    const rest = endpoint.rest;
    if (!rest) return [];
    return rest.routes.map(
      (r): Route => ({
        method: r.method,
        pattern: r.path,
        subject: endpoint.subject,
        access: rest.access,
        denialStatus: rest.denialStatus,
        body: rest.body,
        endpoint: name,
      }),
    );
  });
}
