/** Calls Corral's REST API with the identity headers and token of the settings; errors become typed errors. */
import type { Method } from "@corral/contracts";
import { ApiError, UnreachableError, errorBodyOf } from "../errors.js";
import { requireIdentity, type Settings } from "../settings/settings.js";

export interface RequestOptions {
  query?: Readonly<Record<string, string>>;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as raw bytes (uploads). */
  bytes?: Uint8Array;
}

export interface ApiClient {
  /** The base URL, version segment included. */
  readonly baseUrl: string;
  /** The parsed JSON answer (`undefined` for an empty body). @throws ApiError, UnreachableError */
  request<T = unknown>(method: Method, path: string, options?: RequestOptions): Promise<T>;
  /** The headers every call carries (identity and token), for streams opened elsewhere. */
  headers(): Record<string, string>;
  /** The URL of a path with its query. */
  urlOf(path: string, query?: Readonly<Record<string, string>>): string;
}

/** How long one call may take before it counts as unreachable. @default 60 s */
const REQUEST_TIMEOUT_MS = 60_000;

export function createApiClient(settings: Settings): ApiClient {
  const identity = requireIdentity(settings);
  const headers = (): Record<string, string> => ({
    "Service-UserID": identity.user,
    "Service-TenantID": identity.tenant,
    ...(settings.token ? { Authorization: `Bearer ${settings.token}` } : {}),
  });
  const urlOf = (path: string, query: Readonly<Record<string, string>> = {}): string => {
    const search = new URLSearchParams(query).toString();
    return `${settings.url}${path}${search ? `?${search}` : ""}`;
  };
  return {
    baseUrl: settings.url,
    headers,
    urlOf,
    async request<T>(method: Method, path: string, options: RequestOptions = {}): Promise<T> {
      const url = urlOf(path, options.query);
      const requestHeaders = headers();
      let body: BodyInit | undefined;
      if (options.bytes !== undefined) {
        body = new Blob([Buffer.from(options.bytes)]);
        requestHeaders["Content-Type"] = "application/octet-stream";
      } else if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        requestHeaders["Content-Type"] = "application/json";
      }
      let response: Response;
      let text: string;
      try {
        response = await fetch(url, { method, headers: requestHeaders, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        text = await response.text();
      } catch (err) {
        throw new UnreachableError(`cannot reach ${url}: ${describeFetchError(err)}`);
      }
      if (response.status >= 400) throw new ApiError(response.status, errorBodyOf(response.status, text));
      if (text.length === 0) return undefined as T;
      try {
        return JSON.parse(text) as T;
      } catch {
        throw new UnreachableError(`${method} ${url} answered HTTP ${response.status} with a body that is not JSON; is ${settings.url} Corral's API?`);
      }
    },
  };
}

/** fetch says "fetch failed" and keeps the reason (ECONNREFUSED, a timeout) in `cause`. */
export function describeFetchError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === "ECONNREFUSED" || cause?.code === "ENOTFOUND") {
    return `${cause.code}; is Corral running there (npm start)? The URL comes from --url, CORRAL_URL or the profile (corral config show)`;
  }
  if (cause?.code) return cause.code;
  if ((err as Error).name === "TimeoutError") return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  return cause?.message ?? (err as Error).message;
}
