/** A small REST client for tests: identity headers, JSON in and out, raw bodies when needed. */
export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined for an empty body. */
  body: T;
  text: string;
}

export interface Caller {
  user?: string;
  tenant?: string;
}

export const SUPERADMIN: Caller = { user: "admin", tenant: "superadmin" };

export interface RequestOptions extends Caller {
  body?: unknown;
  /** Sent as-is (no JSON encoding). */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
}

export async function api<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.user !== undefined) headers["Service-UserID"] = options.user;
  if (options.tenant !== undefined) headers["Service-TenantID"] = options.tenant;
  let body: string | Buffer | undefined;
  if (options.rawBody !== undefined) body = typeof options.rawBody === "string" ? options.rawBody : Buffer.from(options.rawBody);
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] = "application/json";
  }
  const res = await fetch(baseUrl + path, { method, headers, body: body as BodyInit | undefined });
  const text = await res.text();
  let parsed: unknown;
  if (text.length > 0) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** Binds base URL and caller once. */
export function client(baseUrl: string, caller: Caller) {
  return (method: string, path: string, options: Omit<RequestOptions, "user" | "tenant"> = {}) =>
    api(baseUrl, method, path, { ...caller, ...options });
}
