/**
 * Calls Corral's REST API by endpoint name: method, path, body and reply type all come from the endpoint table
 * (contracts/src/endpoints), so a caller neither writes a path nor casts a reply.
 */
import { endpoints, type ApiRequest, type EndpointName, type ReplyOf, type RequestOf, type RestRoute } from "@corral/contracts";

/** The JSON body endpoint `N` takes (`undefined`: none). */
export type BodyOf<N extends EndpointName> = RequestOf<N> extends ApiRequest<infer Body> ? Body : never;

export interface RestCall<N extends EndpointName> {
  /** The route's path parameters by name; they pick the route when the endpoint has several. */
  params?: Readonly<Record<string, string>>;
  body?: BodyOf<N>;
  /** An upload's raw bytes, sent instead of a JSON body. */
  bytes?: Uint8Array<ArrayBuffer>;
}

export interface RestClient {
  /** Calls endpoint `name`; throws with the status and answer when it is not a 2xx. */
  call<N extends EndpointName>(name: N, request?: RestCall<N>): Promise<ReplyOf<N>>;
}

/** The route of `name` whose path parameters are exactly `params`'s, with them filled in (percent-encoded). */
export function restPath(name: EndpointName, params: Readonly<Record<string, string>>): { method: RestRoute["method"]; path: string } {
  const routes: readonly RestRoute[] = endpoints[name].rest?.routes ?? [];
  const given = Object.keys(params);
  const route = routes.find((r) => r.params.length === given.length && r.params.every((p) => params[p] !== undefined));
  if (!route) throw new Error(`endpoint ${name} has no REST route with parameters ${given.join(", ") || "(none)"}`);
  const path = route.path.replace(/:([^/]+)/g, (_, param: string) => encodeURIComponent(params[param] ?? ""));
  return { method: route.method, path };
}

/** A client of the API under `baseUrl` (`http://host:port/v2`) that sends `headers` (the identity) with every call. */
export function restClient(baseUrl: string, headers: Readonly<Record<string, string>>): RestClient {
  return {
    async call(name, request = {}) {
      const { method, path } = restPath(name, request.params ?? {});
      const { bytes, body } = request;
      const res = await fetch(baseUrl + path, {
        method,
        headers: { ...headers, ...(bytes ? { "content-type": "application/octet-stream" } : {}) },
        ...(bytes ? { body: bytes } : body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text}`);
      // The one place a reply's type is taken on trust: the endpoint table says what the service answers (checked
      // against every endpoint's reply schema by test/e2e/contract.test.ts).
      return text ? JSON.parse(text) : undefined;
    },
  };
}
