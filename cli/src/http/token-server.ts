/** The token server (services/auth): logging in for a Bearer token, revoking tokens. */
import { ApiError, UnreachableError, errorBodyOf } from "../errors.js";
import { describeFetchError } from "./api-client.js";

export interface IssuedToken {
  access_token: string;
  token_type: string;
  /** seconds */
  expires_in: number;
}

/**
 * Where to log in: the token server's URL as the gateway names it in a 401's `details.auth_uri`; undefined when
 * the gateway answers without a token (security is off).
 */
export async function discoverTokenUrl(apiUrl: string, identity: { user: string; tenant: string }): Promise<string | undefined> {
  const response = await send(`${apiUrl}/status`, { headers: { "Service-UserID": identity.user, "Service-TenantID": identity.tenant } });
  if (response.status !== 401) return undefined;
  const body = errorBodyOf(401, response.text);
  const uri = (body.details?.["auth_uri"] as unknown[] | undefined)?.[0];
  if (typeof uri !== "string") throw new ApiError(401, body);
  return uri;
}

export interface LoginRequest {
  tokenUrl: string;
  user: string;
  password: string;
  /** Bind the token to this tenant; undefined: a token of the user in every tenant. */
  tenant?: string;
  /** `/extendedtoken`: the longer lifetime. */
  extended: boolean;
}

export async function login(request: LoginRequest): Promise<IssuedToken> {
  const url = request.extended ? request.tokenUrl.replace(/\/token$/, "/extendedtoken") : request.tokenUrl;
  const basic = Buffer.from(`${request.user}:${request.password}`).toString("base64");
  const response = await send(url, {
    headers: { Authorization: `Basic ${basic}`, ...(request.tenant ? { "Service-TenantID": request.tenant } : {}) },
  });
  if (response.status !== 200) throw new ApiError(response.status, errorBodyOf(response.status, response.text));
  return JSON.parse(response.text) as IssuedToken;
}

/** `DELETE /token` (this token) or `DELETE /tokens/{user}` (every token of the user). */
export async function revoke(tokenUrl: string, token: string, user?: string): Promise<void> {
  const url = user === undefined ? tokenUrl : `${tokenUrl.replace(/\/token$/, "")}/tokens/${encodeURIComponent(user)}`;
  const response = await send(url, { method: "DELETE", headers: { Authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new ApiError(response.status, errorBodyOf(response.status, response.text));
}

async function send(url: string, init: RequestInit): Promise<{ status: number; text: string }> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
    return { status: response.status, text: await response.text() };
  } catch (err) {
    throw new UnreachableError(`cannot reach ${url}: ${describeFetchError(err)}`);
  }
}
