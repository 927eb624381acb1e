/** Where a REST endpoint of the table is reached: method and path by endpoint name (the CLI's, launcher's and console's clients). */
import type { ApiRequest } from "../api-request.js";
import type { RestRoute } from "./endpoint.js";
import { endpoints, type EndpointName, type RequestOf } from "./table.js";

/** The JSON body endpoint `N` takes (`undefined`: none). */
export type BodyOf<N extends EndpointName> = RequestOf<N> extends ApiRequest<infer Body> ? Body : never;

/** The route of `name` whose path parameters are exactly `params`'s, with them filled in (percent-encoded). */
export function restPath(name: EndpointName, params: Readonly<Record<string, string>>): { method: RestRoute["method"]; path: string } {
  const routes: readonly RestRoute[] = endpoints[name].rest?.routes ?? [];
  const given = Object.keys(params);
  const route = routes.find((r) => r.params.length === given.length && r.params.every((p) => params[p] !== undefined));
  if (!route) throw new Error(`endpoint ${name} has no REST route with parameters ${given.join(", ") || "(none)"}`);
  const path = route.path.replace(/:([^/]+)/g, (_, param: string) => encodeURIComponent(params[param] ?? ""));
  return { method: route.method, path };
}
