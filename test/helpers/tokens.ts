/** Token-server calls for tests of `security.enabled`: GET /token with Basic credentials, Bearer headers. */
import { request as httpsRequest, type RequestOptions } from "node:https";
import { loadConfig, silentLogger } from "@corral/shared";
import { startAuthService, type AuthService } from "@corral/auth";
import type { TestSystem } from "./system.js";

export interface TokenResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined for an empty body. */
  body: any;
  text: string;
}

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, "utf8").toString("base64")}`;
}

async function parse(res: Response): Promise<TokenResponse> {
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/**
 * `GET <tokenUrl>` with Basic credentials (none when `user` is undefined), naming `tenant` in `Service-TenantID`
 * when given (the token is then bound to it).
 */
export async function requestToken(tokenUrl: string, user?: string, password = "", tenant?: string): Promise<TokenResponse> {
  const headers: Record<string, string> = user === undefined ? {} : { authorization: basic(user, password) };
  if (tenant !== undefined) headers["service-tenantid"] = tenant;
  return parse(await fetch(tokenUrl, { headers }));
}

/** A token for the user (bound to `tenant` when given), or an error naming the answer. */
export async function tokenFor(tokenUrl: string, user: string, password: string, tenant?: string): Promise<string> {
  const r = await requestToken(tokenUrl, user, password, tenant);
  if (r.status !== 200 || typeof r.body?.access_token !== "string") {
    throw new Error(`no token for ${user}: HTTP ${r.status} ${r.text}`);
  }
  return r.body.access_token as string;
}

/** `DELETE <tokenUrl>` (or another path of the token server) with a Bearer token. */
export async function revoke(tokenUrl: string, token: string, path = "/token"): Promise<TokenResponse> {
  const url = new URL(path, tokenUrl);
  return parse(await fetch(url, { method: "DELETE", headers: { authorization: `Bearer ${token}` } }));
}

/** Headers carrying a Bearer token, for `api(..., { headers })`. */
export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** GET over https with extra TLS options (a test CA), since fetch takes none. */
export function httpsGet(url: string, headers: Record<string, string>, tls: RequestOptions): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ...tls, method: "GET", headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.once("error", reject);
    req.end();
  });
}

/**
 * Starts an extra token server in the test process on a free loopback port, against the test system's NATS and
 * Redis, with security on and `config` on top; stopped when the test ends.
 */
export async function startTokenServer(
  t: { context: { sys: TestSystem; dir: string }; teardown(fn: () => unknown): void },
  config: Record<string, string | number | boolean>,
): Promise<AuthService> {
  const svc = await startAuthService({
    nc: t.context.sys.nc,
    log: silentLogger,
    baseDir: t.context.dir,
    config: loadConfig({
      overrides: {
        "security.enabled": true,
        "redis.url": t.context.sys.redis!.url,
        "security.auth.server.address": "127.0.0.1",
        "security.auth.server.bind.port": 0,
        ...config,
      },
    }),
  });
  t.teardown(() => svc.stop());
  return svc;
}
