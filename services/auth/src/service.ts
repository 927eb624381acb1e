import type { NatsConnection } from "@nats-io/transport-node";
import { openAuditLog, openRedis, redisReady, REDIS_START_WAIT_MS, serveEndpoints, type CorralConfig, type Logger, type MetricsRegistry } from "@corral/shared";
import { loginThrottle } from "./adapters/login-throttle.js";
import { pendingLogins } from "./adapters/pending-logins.js";
import { revocationStore } from "./adapters/revocations.js";
import { openSigningKeys } from "./adapters/signing-keys.js";
import { openTenantRecords } from "./adapters/tenants.js";
import { createHandler } from "./authn/select.js";
import { readAuthConfig } from "./config.js";
import { oidcProvider } from "./oidc/provider.js";
import { readOidcSettings } from "./oidc/settings.js";
import { verifyHandlers } from "./handlers/verify.js";
import { tokenAudit } from "./token-audit.js";
import { startTokenServer } from "./token-server.js";
import { openTokenVerifier } from "./verifier.js";

export type { AuthenticationHandler, AuthenticatedUser, HandlerContext, HandlerFactory } from "./authn/types.js";
export type { VerifiedToken } from "@corral/contracts";

export interface AuthServiceDeps {
  nc: NatsConnection;
  log: Logger;
  /** The shared configuration: `security.*` keys and `redis.url`. */
  config: CorralConfig;
  /** Issue time of tokens. @default Date.now */
  clock?: () => number;
  /** Relative paths (realm file, keystore, handler module) resolve against it. @default process.cwd() */
  baseDir?: string;
  /** The process's Prometheus metrics (request durations per endpoint). @default none */
  metrics?: MetricsRegistry;
}

export interface AuthService {
  /** Port of the token server. */
  port: number;
  /** `http(s)://<address>:<port>/token`. */
  tokenUrl: string;
  /** Stops the token server and NATS handlers, closes Redis and the backend. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts the token server (docs/security.md) and the `corral.auth.verify` handler: Basic credentials checked by the
 * configured backend (realm file, LDAP, or a custom module), or a browser signed in through an OpenID Connect
 * provider (`security.oidc.*`), tokens signed with the key from the `corral_auth_keys` bucket, failed logins
 * throttled and revocations kept in Redis.
 */
export async function startAuthService(deps: AuthServiceDeps): Promise<AuthService> {
  const { nc, log } = deps;
  const clock = deps.clock ?? Date.now;
  const config = readAuthConfig(deps.config, deps.baseDir ?? process.cwd());
  const oidc = readOidcSettings(deps.config);
  const cleanups: Array<() => unknown> = [];
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch((err: unknown) => log.warn("auth stop step failed", { err }));
  };
  try {
    const handler = await createHandler(config.handler, log);
    cleanups.push(() => handler.close?.());
    const redis = openRedis({ url: config.redisUrl, log, name: "corral-auth" });
    cleanups.push(() => redis.close());
    // Starts without Redis too (logins answer 503 until it is back); waits a little so a normal start finds it.
    if (!(await redisReady(redis, REDIS_START_WAIT_MS))) log.warn("starting without Redis: logins and revocations answer 503 until it is back");
    const keys = await openSigningKeys({ nc, log, ensureKey: true, clock });
    cleanups.push(() => keys.stop());
    const verifier = await openTokenVerifier({ nc, log, redisUrl: config.redisUrl });
    cleanups.push(() => verifier.stop());
    const served = serveEndpoints({ nc, service: "auth", log, handlers: verifyHandlers(verifier), metrics: deps.metrics });
    cleanups.push(() => served.stop());
    const auditLog = deps.config.get("audit.enabled") ? openAuditLog({ nc, log: log.child({ part: "audit" }), metrics: deps.metrics }) : undefined;
    cleanups.push(() => auditLog?.stop());
    const server = await startTokenServer({
      config,
      handler,
      throttle: loginThrottle(redis, config.throttle),
      revocations: revocationStore(redis),
      keys,
      tenants: await openTenantRecords(nc),
      verifier,
      clock,
      log,
      audit: tokenAudit(auditLog, clock),
      ...(oidc ? { oidc: { settings: oidc, provider: oidcProvider(oidc, log, clock), logins: pendingLogins(redis) } } : {}),
    });
    cleanups.push(() => server.stop());
    let stopping: Promise<void> | undefined;
    return {
      port: server.port,
      tokenUrl: server.url,
      stop() {
        stopping ??= cleanup();
        return stopping;
      },
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
