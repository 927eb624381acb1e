/**
 * Calls Corral's REST API by endpoint name: method, path, body and reply type all come from the endpoint table
 * (contracts/src/endpoints), so a caller neither writes a path nor casts a reply.
 */
import { restPath, type BodyOf, type EndpointName, type ReplyOf } from "@corral/contracts";

export { restPath, type BodyOf };

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
