/**
 * The console's one API client: calls an endpoint by its name in the endpoint table (contracts/src/endpoints), so
 * methods, paths, bodies and replies come from the table. Errors keep the server's status, code and details.
 */
import { restPath, type BodyOf, type EndpointName, type ReplyOf } from "@corral/contracts";
import { identityHeaders, type Session } from "./session.js";

export const API_BASE = "/v2";

/** A non-2xx answer: the JSON error of the API (`{status, error, message, details?}`) or a missing-fields 4xx. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }

  /** The field a validation error names (`details.field`), if any. */
  get field(): string | undefined {
    const field = this.details["field"];
    return typeof field === "string" ? field : undefined;
  }

  /**
   * Names of the provider fields the server asks for: `{missingFields: [{<name>: {label, type, ...}}]}`
   * (docs/api.md, Provider fields of a request).
   */
  get missingFields(): string[] | undefined {
    const entries: unknown = this.details["missingFields"];
    if (!Array.isArray(entries)) return undefined;
    return entries.flatMap((entry: unknown) => (typeof entry === "string" ? [entry] : entry && typeof entry === "object" ? Object.keys(entry) : []));
  }
}

export interface CallOptions<N extends EndpointName> {
  params?: Readonly<Record<string, string>>;
  query?: Readonly<Record<string, string>>;
  body?: BodyOf<N>;
  signal?: AbortSignal;
}

async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return new ApiError(res.status, "http_error", text || res.statusText);
  }
  const body = (value && typeof value === "object" ? value : {}) as Record<string, unknown>;
  if (Array.isArray(body["missingFields"])) {
    const error = new ApiError(res.status, "missing_fields", "", body);
    return new ApiError(res.status, "missing_fields", `missing provider fields: ${error.missingFields?.join(", ")}`, body);
  }
  const details = body["details"] && typeof body["details"] === "object" ? (body["details"] as Record<string, unknown>) : {};
  return new ApiError(res.status, String(body["error"] ?? "http_error"), String(body["message"] ?? text), details);
}

export interface Api {
  call<N extends EndpointName>(name: N, options?: CallOptions<N>): Promise<ReplyOf<N>>;
  /** The same call with `?dryRun=true`: the layout and plan it would make, nothing written. */
  dryRun<N extends EndpointName>(name: N, options?: CallOptions<N>): Promise<unknown>;
  /** Headers of the session, for streams opened outside `call` (events.ts). */
  headers(): Record<string, string>;
}

export function apiClient(session: Session): Api {
  const send = async (name: EndpointName, options: CallOptions<EndpointName>, extraQuery: Record<string, string>) => {
    const { method, path } = restPath(name, options.params ?? {});
    const query = new URLSearchParams({ ...options.query, ...extraQuery }).toString();
    const res = await fetch(`${API_BASE}${path}${query ? `?${query}` : ""}`, {
      method,
      headers: { ...identityHeaders(session), ...(options.body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (!res.ok) throw await errorOf(res);
    const text = await res.text();
    return text ? (JSON.parse(text) as unknown) : undefined;
  };
  return {
    // The reply's type is the table's word for what the service answers (checked by test/e2e/contract.test.ts).
    call: async <N extends EndpointName>(name: N, options: CallOptions<N> = {}) => (await send(name, options, {})) as ReplyOf<N>,
    dryRun: (name, options = {}) => send(name, options, { dryRun: "true" }),
    headers: () => identityHeaders(session),
  };
}
