import type { IncomingMessage, ServerResponse } from "node:http";
import * as client from "openid-client";
import { CorralError } from "@corral/contracts";
import { redisCall, type Logger } from "@corral/shared";
import { PENDING_LOGIN_SECONDS, type PendingLogins } from "../adapters/pending-logins.js";
import type { TenantRecords } from "../adapters/tenants.js";
import { roleFromToken } from "../domain/roles.js";
import type { TenantBinding } from "../domain/tenant-binding.js";
import { HttpError, redirect, send, sendHtmlProblem } from "../http-answers.js";
import { identityFromClaims } from "./claims.js";
import { ProviderUnavailableError, type OidcProvider } from "./provider.js";
import type { OidcSettings } from "./settings.js";
import type { TokenCaller } from "../token-audit.js";

/**
 * Signing in through the identity provider in a browser (docs/security.md, Single sign-on): the authorization code
 * flow with PKCE, state and nonce.
 * - `GET /oidc/login[?login_hint=...]`: keeps a pending login (PKCE verifier, nonce) under a random state in Redis,
 *   binds the state to this browser with an HttpOnly cookie, and redirects to the provider.
 * - `GET /oidc/callback?code&state`: the state must be this browser's and unused; the code is exchanged, the ID
 *   token checked (signature, issuer, audience, expiry, nonce), its claims mapped, the tenant looked up, and a
 *   Corral token issued as `GET /token` issues one bound to that tenant. With a console URL the browser goes there
 *   with the token in the fragment; otherwise the answer is the token as JSON.
 */
export interface BrowserLogin {
  start(req: IncomingMessage, res: ServerResponse): Promise<void>;
  finish(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

export interface IssuedToken {
  token: string;
  expiresInSeconds: number;
}

export interface BrowserLoginDeps {
  settings: OidcSettings;
  provider: OidcProvider;
  logins: PendingLogins;
  tenants: TenantRecords;
  /** Signs a Corral token for this user, roles and tenant, as `GET /token` would. */
  mint(userId: string, roles: string[], tenant: TenantBinding): IssuedToken;
  /** Where the provider sends the browser back (the token server's `/oidc/callback` unless configured). */
  callbackUrl(): URL;
  /** Told who a callback signs in once the provider's claims name them (the audit log records it). */
  identified?(req: IncomingMessage, caller: TokenCaller): void;
  log: Logger;
}

export const LOGIN_PATH = "/oidc/login";
export const CALLBACK_PATH = "/oidc/callback";
const STATE_COOKIE = "corral_oidc_state";
const MAX_LOGIN_HINT = 255;

function cookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function stateCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${STATE_COOKIE}=${value}; Path=${CALLBACK_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`;
}

/** Why the provider's answer was not accepted, for the person signing in (details go to the log). */
function exchangeProblem(err: unknown): HttpError {
  if (err instanceof client.AuthorizationResponseError) {
    const description = err.error_description ? `: ${err.error_description}` : "";
    return new HttpError(401, "unauthorized", `the identity provider refused the sign-in (${err.error}${description})`);
  }
  if (err instanceof client.ResponseBodyError) {
    return new HttpError(401, "unauthorized", `the identity provider refused the code (${err.error}); sign in again`);
  }
  if (err instanceof ProviderUnavailableError) return new HttpError(503, "service_unavailable", err.message);
  if (err instanceof client.ClientError) return new HttpError(401, "unauthorized", `the identity provider's answer failed a check: ${err.message}`);
  return new HttpError(503, "service_unavailable", "the identity provider cannot be reached; try again later");
}

export function browserLogin(deps: BrowserLoginDeps): BrowserLogin {
  const { settings, provider, logins, tenants, log } = deps;

  const configuration = () =>
    provider.configuration().catch((err: unknown) => {
      throw new HttpError(503, "service_unavailable", (err as Error).message);
    });

  const start = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const config = await configuration();
    const loginHint = new URL(req.url ?? "/", "http://token-server").searchParams.get("login_hint") ?? "";
    if (loginHint.length > MAX_LOGIN_HINT) throw new HttpError(400, "bad_request", `login_hint is longer than ${MAX_LOGIN_HINT} characters`);
    const state = client.randomState();
    const codeVerifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    await redisCall("no sign-in can start", () => logins.put(state, { codeVerifier, nonce }), { log });
    const callback = deps.callbackUrl();
    const target = client.buildAuthorizationUrl(config, {
      redirect_uri: callback.href,
      scope: settings.scopes,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      state,
      nonce,
      ...(loginHint ? { login_hint: loginHint } : {}),
    });
    redirect(res, target.href, { "Set-Cookie": stateCookie(state, PENDING_LOGIN_SECONDS, callback.protocol === "https:") });
  };

  const complete = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const callback = deps.callbackUrl();
    const params = new URL(req.url ?? "/", "http://token-server").searchParams;
    const state = params.get("state") ?? "";
    if (!state || cookie(req, STATE_COOKIE) !== state) {
      throw new HttpError(400, "bad_request", "this sign-in did not start in this browser (its state does not match); start again");
    }
    const pending = await redisCall("no sign-in can finish", () => logins.take(state), { log });
    if (!pending) throw new HttpError(400, "bad_request", "this sign-in has expired or was already used; start again");
    // openid-client reads the answer from this URL and sends its address, without the query, as redirect_uri.
    const answered = new URL(callback.href);
    answered.search = params.toString();
    let claims: Record<string, unknown>;
    try {
      const tokens = await client.authorizationCodeGrant(await provider.configuration(), answered, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      claims = { ...tokens.claims() };
    } catch (err) {
      const problem = exchangeProblem(err);
      log.info("single sign-on refused", { reason: problem.message, err });
      throw problem;
    }
    const reading = identityFromClaims(claims, settings.claims);
    if (!reading.ok) throw new HttpError(403, "forbidden", `the identity provider's token cannot be used: ${reading.reason}`);
    const { userId, tenant: tenantName, roles } = reading.identity;
    const role = roleFromToken(roles, tenantName);
    deps.identified?.(req, { user: userId, tenant: tenantName, role });
    const tenant = await tenants.bindingOf(tenantName).catch((err: unknown) => {
      log.warn("reading the tenant failed", { err });
      throw new HttpError(503, "service_unavailable", "reading the tenant is unavailable; try again later");
    });
    if (!tenant) throw new HttpError(403, "forbidden", `tenant ${tenantName}, named by the identity provider's tenant claim, does not exist`);
    const issued = deps.mint(userId, roles, tenant);
    log.info("token issued through single sign-on", { user: userId, roles, tenant: tenantName });
    const clearCookie = { "Set-Cookie": stateCookie("", 0, callback.protocol === "https:") };
    if (settings.consoleUrl) {
      const target = new URL(settings.consoleUrl.href);
      target.hash = `/sign-in?${new URLSearchParams({ token: issued.token, user: userId, tenant: tenantName, role })}`;
      return redirect(res, target.href, clearCookie);
    }
    send(res, 200, { access_token: issued.token, token_type: "Bearer", expires_in: issued.expiresInSeconds, user: userId, tenant: tenantName, role }, clearCookie);
  };

  return {
    start,
    async finish(req, res) {
      try {
        await complete(req, res);
      } catch (err) {
        // A person in a browser gets a page saying what went wrong; other clients the usual JSON error.
        if (!(err instanceof HttpError || err instanceof CorralError) || !/\btext\/html\b/.test(req.headers.accept ?? "")) throw err;
        sendHtmlProblem(res, err.status, err.message, settings.consoleUrl?.href);
      }
    },
  };
}
