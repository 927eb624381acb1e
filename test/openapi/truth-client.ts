/**
 * A REST client for test/openapi: every request goes through the Prism proxy (test/helpers/prism.ts) in front of
 * the gateway; each answer must have the expected status, and what Prism found in the request and the answer is
 * kept as findings. Also tracks which routes of the endpoint table were exercised.
 */
import { endpointList } from "@corral/contracts";
import { api, type ApiResponse, type Caller } from "../helpers/api.js";
import { violationsOf, type PrismViolation } from "../helpers/prism.js";

/** A REST route or event stream of the table, as `METHOD /path/:param`. */
export type RouteKey = string;

interface TableRoute {
  key: RouteKey;
  method: string;
  segments: string[];
}

/** Every REST route and event stream of the endpoint table, in table order. */
export function tableRoutes(): TableRoute[] {
  return endpointList().flatMap(({ endpoint }) => {
    const routes = [...(endpoint.rest?.routes ?? []), ...(endpoint.stream ? [endpoint.stream.route] : [])];
    return routes.map((r) => ({ key: `${r.method} ${r.path}`, method: r.method, segments: r.path.split("/").slice(1) }));
  });
}

/** The table route a request path matches (its query left out); the one with most literal segments wins. */
export function routeOf(routes: readonly TableRoute[], method: string, path: string): RouteKey | undefined {
  const segments = (path.split("?")[0] ?? "").split("/").slice(1);
  let best: { key: RouteKey; literals: number } | undefined;
  for (const r of routes) {
    if (r.method !== method || r.segments.length !== segments.length) continue;
    const fits = r.segments.every((s, i) => s.startsWith(":") ? segments[i] !== "" : s === segments[i]);
    if (!fits) continue;
    const literals = r.segments.filter((s) => !s.startsWith(":")).length;
    if (!best || literals > best.literals) best = { key: r.key, literals };
  }
  return best?.key;
}

export interface Expectation {
  /** @default 200 */
  status?: number;
  /**
   * The document itself refuses the request (a body, parameter or identity it does not allow): Prism must say so,
   * as the server does. Otherwise Prism must find nothing wrong with the request.
   */
  documentRefuses?: boolean;
}

export interface CallOptions extends Expectation {
  body?: unknown;
  /** Sent as-is instead of a JSON body. */
  rawBody?: string;
  headers?: Record<string, string>;
}

/** What Prism found, one line each: the call, the status, where and what. */
function describeFindings(call: string, res: ApiResponse, expect: Expectation, violations: PrismViolation[]): string[] {
  const line = (v: PrismViolation) => `${call} -> ${res.status}: ${v.location.join(".") || "?"}: ${v.message}`;
  const inRequest = violations.filter((v) => v.location[0] === "request");
  const inAnswer = violations.filter((v) => v.location[0] !== "request");
  const findings = inAnswer.map(line);
  if (!expect.documentRefuses) findings.push(...inRequest.map(line));
  else if (inRequest.length === 0) findings.push(`${call} -> ${res.status}: the server refuses the request, the document allows it`);
  return findings;
}

export interface TruthClient {
  /** Sends the request through Prism; throws unless the status is the expected one. */
  call(caller: Caller, method: string, path: string, options?: CallOptions): Promise<ApiResponse<any>>;
  /** Uploads raw bytes (a plugin resource) through Prism. */
  upload(caller: Caller, path: string, bytes: string, expect?: Expectation): Promise<ApiResponse<any>>;
  /** Everything Prism found so far, one line per finding. */
  readonly findings: string[];
}

/** A client whose calls go through the proxy at `prismUrl`; each exercised route is added to `exercised`. */
export function truthClient(prismUrl: string, exercised: Set<RouteKey>, routes = tableRoutes()): TruthClient {
  const findings: string[] = [];
  const check = (method: string, path: string, res: ApiResponse<any>, expect: Expectation): ApiResponse<any> => {
    const call = `${method} ${path}`;
    const status = expect.status ?? 200;
    if (res.status !== status) throw new Error(`${call}: HTTP ${res.status}, expected ${status}: ${res.text.slice(0, 500)}`);
    const route = routeOf(routes, method, path);
    if (route === undefined) throw new Error(`${call} is no route of the endpoint table`);
    exercised.add(route);
    findings.push(...describeFindings(call, res, expect, violationsOf(res.headers)));
    return res;
  };
  return {
    findings,
    async call(caller, method, path, options = {}) {
      const { body, rawBody, headers, ...expect } = options;
      const res = await api(prismUrl, method, path, {
        ...caller,
        ...(body !== undefined ? { body } : {}),
        ...(rawBody !== undefined ? { rawBody } : {}),
        ...(headers ? { headers } : {}),
      });
      return check(method, path, res, expect);
    },
    async upload(caller, path, bytes, expect = {}) {
      const headers = { "content-type": "application/octet-stream" };
      return check("POST", path, await api(prismUrl, "POST", path, { ...caller, rawBody: bytes, headers }), expect);
    },
  };
}
