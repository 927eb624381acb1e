/**
 * The validator of one row of the endpoint table: what a service runs on every request before its handler (see
 * serveEndpoints in shared/src/endpoint-rpc.ts). Compiled once, from the row's request declaration.
 */
import type { ApiRequest } from "../api-request.js";
import type { Endpoint } from "../endpoints/endpoint.js";
import { bodyValidator, paramsValidator, queryValidator, type Validator } from "./check.js";

const unchanged: Validator<unknown> = (value) => value;

/**
 * Checks and decodes a request to `endpoint`: for a REST row the gateway's envelope (path parameters, query
 * parameters, then the body; a body the row reads none of is dropped), for an internal row the NATS request.
 */
export function requestValidator(endpoint: Endpoint): Validator<unknown> {
  const { request, rest } = endpoint;
  if (!rest) return request.body ? bodyValidator(request.body) : unchanged;
  const params = request.params ? paramsValidator(request.params) : unchanged;
  const query = request.query ? queryValidator(request.query) : () => ({});
  const readsBody = (rest.body === "json" || rest.body === "optional") && request.body !== undefined;
  const body = readsBody ? bodyValidator(request.body!) : undefined;
  const optional = rest.body === "optional";
  return (value) => {
    const envelope = value as ApiRequest;
    const decoded: ApiRequest = { ...envelope, params: params(envelope.params ?? {}) as ApiRequest["params"], query: query(envelope.query) as ApiRequest["query"] };
    if (body === undefined || (optional && (envelope.body === undefined || envelope.body === null))) delete decoded.body;
    else decoded.body = body(envelope.body);
    return decoded;
  };
}
