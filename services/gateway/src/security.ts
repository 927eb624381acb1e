import type { NatsConnection } from "@nats-io/transport-node";
import { UnauthorizedError, type Identity } from "@corral/contracts";
import type { Logger } from "@corral/shared";
import {
  bindingProblem,
  openTokenVerifier,
  roleFromToken,
  signInDetails,
  type OidcSettings,
  type SignInDetails,
  type TenantBinding,
  type TokenClaims,
} from "@corral/auth/internal";

/**
 * Bearer-token authentication of API requests when `security.enabled` is on (docs/security.md).
 *
 * Every request, `/status` included, needs `Authorization: Bearer <token>`; otherwise 401 with
 * `WWW-Authenticate: Bearer realm="..."` and the token server's URL in `details.auth_uri`. Tokens are
 * checked here, without a NATS round trip: the HMAC signature against keys watched from the
 * `corral_auth_keys` bucket (checks cached per token), the expiry against the clock, revocation against a
 * list watched from Redis (a revocation takes effect within milliseconds; while Redis is unreachable the last
 * list read applies, and before the list was read once every token is refused with a 503). Then the token's user must be the `Service-UserID` it acts as, and the token's roles,
 * not the user name, decide admin rights (see `roleFromToken` in `@corral/auth`). A token whose login named a
 * tenant acts only in that tenant, and only while it is the same tenant (same uid): not in a tenant created
 * later under the same name. With single sign-on (`oidc`), JWTs of the identity provider are accepted too when the
 * operator allows it, bound by name to the tenant their claims give, and every 401 names where a browser signs in
 * (`details.sso`).
 */
export interface GatewaySecurity {
  /** Checks the `Authorization` header value; never throws. */
  authenticate(authorization: string): Promise<Authentication>;
  stop(): Promise<void>;
}

export type Authentication = { ok: true; session: Session } | { ok: false; denial: Denial };

/** A verified token, able to turn header identity into the identity the services see. */
export interface Session {
  claims: TokenClaims;
  /**
   * The header identity with the token's role; 401 when the token's user is not `Service-UserID`, or the token
   * is bound to another tenant or to an earlier tenant of this name. Synchronous unless the cached uid of a
   * bound token's tenant disagrees with the token (then the bucket is asked): the check costs no promise per
   * request.
   */
  identify(identity: Identity, tenants: TenantUids): Identity | Promise<Identity>;
}

/** Current tenant uids (the gateway's tenant directory): as cached, and as read from the bucket now. */
export interface TenantUids {
  cachedUidOf(tenant: string): string | undefined;
  freshUidOf(tenant: string): Promise<string | undefined>;
}

/**
 * A 401 answer (status, JSON error code and message, `details.auth_uri`, and the challenge header), or a 503 when
 * the token cannot be checked now.
 */
export interface Denial {
  status: 401 | 503;
  code: "unauthorized" | "invalid_token" | "service_unavailable";
  message: string;
  details: { auth_uri: string[]; sso?: SignInDetails };
  headers: Record<string, string>;
}

export interface GatewaySecurityOptions {
  nc: NatsConnection;
  log: Logger;
  redisUrl: string;
  /** Where tokens are issued, told to callers without one: `http(s)://<auth address>:<port>/token`. */
  tokenUrl: string;
  /** Named in `WWW-Authenticate`. @default "corral" */
  realm?: string;
  /** @default Date.now */
  clock?: () => number;
  /** Single sign-on (`readOidcSettings` of `@corral/auth/internal`). @default none */
  oidc?: OidcSettings;
}

/** Longest `Authorization` header looked at; real ones are a few hundred bytes. */
const MAX_AUTHORIZATION_CHARS = 8192;

/**
 * For a bound token the cache disagrees with: the cache may not have seen yet a tenant re-created a moment ago,
 * whose uid a fresh login already carries.
 */
async function confirmBinding(binding: TenantBinding, tenant: string, tenants: TenantUids): Promise<void> {
  const problem = bindingProblem(binding, tenant, binding.name === tenant ? await tenants.freshUidOf(tenant) : undefined);
  if (problem) throw new UnauthorizedError(problem);
}

export async function openGatewaySecurity(options: GatewaySecurityOptions): Promise<GatewaySecurity> {
  const realm = options.realm ?? "corral";
  const details = { auth_uri: [options.tokenUrl], ...(options.oidc ? { sso: signInDetails(options.oidc, options.tokenUrl) } : {}) };
  const verifier = await openTokenVerifier({
    nc: options.nc,
    log: options.log,
    redisUrl: options.redisUrl,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.oidc ? { oidc: options.oidc } : {}),
  });
  const missing = (message: string): Authentication => ({
    ok: false,
    denial: { status: 401, code: "unauthorized", message, details, headers: { "www-authenticate": `Bearer realm="${realm}"` } },
  });
  const invalid = (reason: string): Authentication => ({
    ok: false,
    denial: {
      status: 401,
      code: "invalid_token",
      message: reason,
      details,
      headers: { "www-authenticate": `Bearer realm="${realm}", error="invalid_token", error_description="${reason}"` },
    },
  });
  const unavailable = (reason: string): Authentication => ({
    ok: false,
    denial: { status: 503, code: "service_unavailable", message: reason, details, headers: {} },
  });
  return {
    async authenticate(authorization) {
      if (!authorization) return missing(`a Bearer token is required; get one at ${options.tokenUrl}`);
      if (authorization.length > MAX_AUTHORIZATION_CHARS) return invalid("the Authorization header is too long");
      const m = /^(\S+)\s+(\S+)\s*$/.exec(authorization);
      if (!m || m[1]!.toLowerCase() !== "bearer") {
        return missing(`only Bearer tokens are accepted (Authorization: Bearer <token>); get one at ${options.tokenUrl}`);
      }
      const check = await verifier.verify(m[2]!);
      if (!check.ok) return check.unavailable ? unavailable(check.reason) : invalid(check.reason);
      const claims = check.claims;
      return {
        ok: true,
        session: {
          claims,
          identify(identity, tenants) {
            if (identity.userId !== claims.userId) {
              throw new UnauthorizedError(`the token belongs to user ${claims.userId}, not to Service-UserID ${identity.userId}`);
            }
            const identified = { ...identity, role: roleFromToken(claims.roles, identity.tenant) };
            const binding = claims.tenant;
            if (!binding || !bindingProblem(binding, identity.tenant, tenants.cachedUidOf(identity.tenant))) return identified;
            return confirmBinding(binding, identity.tenant, tenants).then(() => identified);
          },
        },
      };
    },
    stop: () => verifier.stop(),
  };
}
