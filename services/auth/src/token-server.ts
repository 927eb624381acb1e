import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { CorralError, isValidName } from "@corral/contracts";
import { redisCall, type Logger } from "@corral/shared";
import type { LoginThrottle } from "./adapters/login-throttle.js";
import type { RevocationStore } from "./adapters/revocations.js";
import type { SigningKeys } from "./adapters/signing-keys.js";
import type { TenantRecords } from "./adapters/tenants.js";
import type { AuthenticationHandler } from "./authn/types.js";
import type { AuthConfig } from "./config.js";
import { isSuperadmin } from "./domain/roles.js";
import type { TenantBinding } from "./domain/tenant-binding.js";
import { newTokenId, signToken } from "./domain/token.js";
import { HttpError, send } from "./http-answers.js";
import type { PendingLogins } from "./adapters/pending-logins.js";
import { browserLogin, CALLBACK_PATH, LOGIN_PATH } from "./oidc/browser-login.js";
import type { TokenAudit } from "./token-audit.js";
import type { OidcProvider } from "./oidc/provider.js";
import type { OidcSettings } from "./oidc/settings.js";
import { listenOnSharedPort } from "./shared-port.js";
import type { TokenVerifier } from "./verifier.js";

/**
 * The token server (docs/security.md):
 * - `GET /token` with `Authorization: Basic` -> 200 `{access_token, token_type: "Bearer", expires_in}`;
 *   401 for missing or wrong credentials (with a Basic challenge); 429 with `Retry-After` while throttled;
 *   503 when the backend or Redis cannot answer (failed logins cannot be counted without Redis, and no login
 *   goes unthrottled). With a `Service-TenantID` header the token is bound to that
 *   tenant (see {@link TenantBinding}): 401 when it does not exist, 400 when the name is invalid.
 * - `GET /extendedtoken`: the same, with the extended lifetime (Coopr's, 7 days by default).
 * - `DELETE /token` with `Authorization: Bearer <token>` -> revokes that token (200, empty body).
 * - `DELETE /tokens/{user}` with a Bearer token of that user or of the superadmin -> revokes every token the
 *   user holds (200, empty body); 403 for anyone else.
 * - `GET /oidc/login` and `GET /oidc/callback` with single sign-on configured: a browser signs in through the
 *   identity provider (oidc/browser-login.ts).
 * Every answer is JSON (`Content-Type: application/json;charset=UTF-8`) and not cacheable.
 */
export interface TokenServerDeps {
  config: AuthConfig;
  handler: AuthenticationHandler;
  throttle: LoginThrottle;
  revocations: RevocationStore;
  keys: SigningKeys;
  tenants: TenantRecords;
  verifier: TokenVerifier;
  clock: () => number;
  log: Logger;
  /** Single sign-on through an identity provider (`security.oidc.*`): `GET /oidc/login` and `/oidc/callback`. */
  oidc?: { settings: OidcSettings; provider: OidcProvider; logins: PendingLogins };
  /** Records logins and revocations in the audit log (token-audit.ts). */
  audit?: TokenAudit;
}

export interface TokenServer {
  port: number;
  /** `http(s)://host:port/token`. */
  url: string;
  stop(): Promise<void>;
}

/** Longest user name accepted; the gateway refuses longer `Service-UserID`s anyway. */
const MAX_USER_LENGTH = 255;
const TENANT_HEADER = "service-tenantid";

function credentialsOf(header: string | undefined): { user: string; password: string } | undefined {
  const m = /^Basic\s+(\S+)\s*$/i.exec(header ?? "");
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon <= 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function bearerOf(header: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(header ?? "")?.[1];
}

/** The tenant a login names (the API's identity header), or undefined when it names none. */
function tenantOf(req: IncomingMessage): string | undefined {
  const tenant = req.headers[TENANT_HEADER];
  if (tenant === undefined) return undefined;
  if (typeof tenant !== "string" || !isValidName(tenant)) {
    throw new HttpError(400, "bad_request", "the Service-TenantID header is not a valid tenant name");
  }
  return tenant;
}

function clientAddress(req: IncomingMessage): string {
  const address = req.socket.remoteAddress ?? "unknown";
  return address.startsWith("::ffff:") ? address.slice(7) : address;
}

export async function startTokenServer(deps: TokenServerDeps): Promise<TokenServer> {
  const { config, handler, throttle, revocations, keys, tenants, verifier, clock, log } = deps;
  const basicChallenge = { "WWW-Authenticate": `Basic realm="${config.realm}", charset="UTF-8"` };
  const unavailable = (what: string, err: unknown): HttpError => {
    log.warn(`${what} failed`, { err });
    return new HttpError(503, "service_unavailable", `${what} is unavailable; try again later`);
  };

  const mint = (userId: string, roles: string[], tenant: TenantBinding | undefined, lifetimeSeconds: number): string => {
    const key = keys.current();
    if (!key) throw unavailable("the signing key", new Error("no signing key in the bucket"));
    const now = clock();
    const claims = { userId, roles, issuedAtMs: now, expiresAtMs: now + lifetimeSeconds * 1000, tokenId: newTokenId() };
    return signToken(tenant ? { ...claims, tenant } : claims, key);
  };

  // Set once listening: the default callback address of single sign-on needs the port.
  let serverUrl: URL | undefined;
  const sso = deps.oidc
    ? browserLogin({
        ...deps.oidc,
        tenants,
        log,
        mint: (userId, roles, tenant) => ({ token: mint(userId, roles, tenant, config.tokenLifetimeSeconds), expiresInSeconds: Math.floor(config.tokenLifetimeSeconds) }),
        callbackUrl: () => deps.oidc!.settings.redirectUri ?? new URL(CALLBACK_PATH, serverUrl),
        identified: (req, caller) => deps.audit?.caller(req, caller),
      })
    : undefined;

  const issue = async (req: IncomingMessage, res: ServerResponse, lifetimeSeconds: number): Promise<void> => {
    const credentials = credentialsOf(req.headers.authorization);
    if (!credentials) {
      throw new HttpError(401, "unauthorized", "Basic credentials are required (Authorization: Basic base64(user:password))", basicChallenge);
    }
    const { user, password } = credentials;
    deps.audit?.caller(req, { user });
    const tenantName = tenantOf(req);
    if (tenantName !== undefined) deps.audit?.caller(req, { user, tenant: tenantName });
    const address = clientAddress(req);
    const waitSeconds = await redisCall(
      "no token is issued while failed logins cannot be counted",
      () => throttle.blockedForSeconds(user, address),
      { log },
    );
    if (waitSeconds > 0) {
      throw new HttpError(429, "too_many_requests", `too many failed logins; try again in ${waitSeconds} s`, {
        "Retry-After": String(waitSeconds),
      });
    }
    const authenticated =
      user.length > MAX_USER_LENGTH
        ? null
        : await handler.authenticate(user, password).catch((err: unknown) => {
            throw unavailable("the authentication backend", err);
          });
    if (!authenticated) {
      await redisCall("the failed login is not counted", () => throttle.recordFailure(user, address), { log }).catch(() => {});
      log.info("login refused", { user, address });
      throw new HttpError(401, "unauthorized", "invalid user name or password", basicChallenge);
    }
    await redisCall("the user's failed logins are not cleared", () => throttle.recordSuccess(user), { log }).catch(() => {});
    // Looked up only after the password: who may not log in learns nothing about which tenants exist.
    let tenant: TenantBinding | undefined;
    if (tenantName !== undefined) {
      tenant = await tenants.bindingOf(tenantName).catch((err: unknown) => {
        throw unavailable("reading the tenant", err);
      });
      if (!tenant) throw new HttpError(401, "unauthorized", `tenant ${tenantName} does not exist`);
    }
    const roles = [...new Set(authenticated.roles.map(String).filter(Boolean))];
    const token = mint(user, roles, tenant, lifetimeSeconds);
    log.info("token issued", { user, roles, tenant: tenantName, address, lifetimeSeconds });
    send(res, 200, { access_token: token, token_type: "Bearer", expires_in: Math.floor(lifetimeSeconds) });
  };

  const bearerClaims = async (req: IncomingMessage) => {
    const token = bearerOf(req.headers.authorization);
    const bearerChallenge = { "WWW-Authenticate": `Bearer realm="${config.realm}"` };
    if (!token) throw new HttpError(401, "unauthorized", "a Bearer token is required", bearerChallenge);
    const check = await verifier.verify(token);
    if (!check.ok && check.unavailable) throw new HttpError(503, "service_unavailable", check.reason);
    if (!check.ok) {
      throw new HttpError(401, "invalid_token", check.reason, {
        "WWW-Authenticate": `Bearer realm="${config.realm}", error="invalid_token", error_description="${check.reason}"`,
      });
    }
    deps.audit?.caller(req, { user: check.claims.userId, ...(check.claims.tenant ? { tenant: check.claims.tenant.name } : {}) });
    return check.claims;
  };

  const revokeOne = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const claims = await bearerClaims(req);
    await redisCall("the token cannot be revoked", () => revocations.revokeToken(claims, clock()), { log });
    log.info("token revoked", { user: claims.userId, tokenId: claims.tokenId });
    send(res, 200, undefined);
  };

  const revokeUser = async (req: IncomingMessage, res: ServerResponse, user: string): Promise<void> => {
    const claims = await bearerClaims(req);
    if (claims.userId !== user && !isSuperadmin(claims.roles)) {
      throw new HttpError(403, "forbidden", "only the user or the superadmin may revoke a user's tokens");
    }
    await redisCall("the user's tokens cannot be revoked", () => revocations.revokeUser(user, clock()), { log });
    log.info("all tokens of a user revoked", { user, by: claims.userId });
    send(res, 200, undefined);
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? "/", "http://token-server").pathname;
    const method = req.method ?? "GET";
    if (path === "/extendedtoken" || path === "/extendedtoken/") {
      deps.audit?.observe(req, res, "auth.login", "/extendedtoken");
      if (method === "GET") return issue(req, res, config.extendedTokenLifetimeSeconds);
      throw new HttpError(405, "method_not_allowed", `${method} is not allowed on /extendedtoken`, { Allow: "GET" });
    }
    if (path === "/token" || path === "/token/") {
      deps.audit?.observe(req, res, method === "DELETE" ? "auth.revokeToken" : "auth.login", "/token");
      if (method === "GET") return issue(req, res, config.tokenLifetimeSeconds);
      if (method === "DELETE") return revokeOne(req, res);
      throw new HttpError(405, "method_not_allowed", `${method} is not allowed on /token`, { Allow: "GET, DELETE" });
    }
    if (sso && (path === LOGIN_PATH || path === CALLBACK_PATH)) {
      // The route is the path alone: the code and state in the query never reach the log.
      if (path === CALLBACK_PATH) deps.audit?.observe(req, res, "auth.login", CALLBACK_PATH);
      if (method !== "GET") throw new HttpError(405, "method_not_allowed", `${method} is not allowed on ${path}`, { Allow: "GET" });
      return path === LOGIN_PATH ? sso.start(req, res) : sso.finish(req, res);
    }
    const userPath = /^\/tokens\/([^/]+)\/?$/.exec(path);
    if (userPath) {
      if (method !== "DELETE") {
        throw new HttpError(405, "method_not_allowed", `${method} is not allowed on ${path}`, { Allow: "DELETE" });
      }
      let user: string;
      try {
        user = decodeURIComponent(userPath[1]!);
      } catch {
        throw new HttpError(400, "bad_request", "the user name in the path is not valid percent-encoding");
      }
      deps.audit?.observe(req, res, "auth.revokeUser", "/tokens/:user", user);
      return revokeUser(req, res, user);
    }
    throw new HttpError(404, "not_found", `no such path ${path}; tokens are issued at GET /token`);
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    req.resume(); // bodies are ignored; drain them
    route(req, res).catch((err: unknown) => {
      if (err instanceof HttpError || err instanceof CorralError) {
        send(res, err.status, { status: err.status, error: err.code, message: err.message }, err instanceof HttpError ? err.headers : {});
        return;
      }
      log.error("token server request failed", { err });
      send(res, 500, { status: 500, error: "internal", message: "internal error" });
    });
  };

  const server: Server = config.tls ? createHttpsServer(config.tls, onRequest) : createHttpServer(onRequest);
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  // Several auth instances serve one token port (or stand by for it: shared-port.ts).
  const shared = await listenOnSharedPort(server, config.port, config.host, log);
  const port = shared.port;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const url = `${config.tls ? "https" : "http"}://${host}:${port}/token`;
  serverUrl = new URL(url);
  let stopping: Promise<void> | undefined;
  return {
    port,
    url,
    stop() {
      shared.stop();
      stopping ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopping;
    },
  };
}
