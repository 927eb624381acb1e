import { resolve } from "node:path";
import type { SecureContextOptions } from "node:tls";
import type { CorralConfig } from "@corral/shared";
import type { LoginThrottleOptions } from "./adapters/login-throttle.js";
import type { HandlerSpec } from "./authn/select.js";
import { loadKeystore } from "./tls.js";

/** The token server's settings, read from the shared configuration once and frozen. */
export interface AuthConfig {
  /** `security.auth.server.address`: where the token server listens and what clients are told. */
  host: string;
  /** `security.auth.server.bind.port`; 0 picks a free port. */
  port: number;
  /** `security.realm`, named in `WWW-Authenticate`. */
  realm: string;
  /** TLS material when `security.auth.server.ssl.keystore.path` is set. */
  tls?: SecureContextOptions;
  /** `security.token.expiration.seconds`. */
  tokenLifetimeSeconds: number;
  /** `security.token.extended.expiration.seconds`: tokens from `GET /extendedtoken`. */
  extendedTokenLifetimeSeconds: number;
  throttle: LoginThrottleOptions;
  handler: HandlerSpec;
  redisUrl: string;
}

function positive(name: string, value: number, allowZero = false): number {
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new Error(`config ${name} must be a ${allowZero ? "non-negative" : "positive"} number, got ${value}`);
  }
  return value;
}

/** @param baseDir relative paths (realm file, keystore, handler module) resolve against it */
export function readAuthConfig(config: CorralConfig, baseDir: string): AuthConfig {
  const keystorePath = config.get("security.auth.server.ssl.keystore.path");
  const tls = loadKeystore({
    path: keystorePath ? resolve(baseDir, keystorePath) : "",
    password: config.get("security.auth.server.ssl.keystore.password"),
    keyPassword: config.get("security.auth.server.ssl.keystore.keypassword"),
    type: config.get("security.auth.server.ssl.keystore.type"),
  });
  return Object.freeze({
    host: config.get("security.auth.server.address"),
    port: positive("security.auth.server.bind.port", config.get("security.auth.server.bind.port"), true),
    realm: config.get("security.realm"),
    ...(tls ? { tls } : {}),
    tokenLifetimeSeconds: positive("security.token.expiration.seconds", config.get("security.token.expiration.seconds")),
    extendedTokenLifetimeSeconds: positive(
      "security.token.extended.expiration.seconds",
      config.get("security.token.extended.expiration.seconds"),
    ),
    throttle: Object.freeze({
      maxFailuresPerUser: positive("security.login.maxFailuresPerUser", config.get("security.login.maxFailuresPerUser"), true),
      maxFailuresPerAddress: positive("security.login.maxFailuresPerAddress", config.get("security.login.maxFailuresPerAddress"), true),
      windowSeconds: positive("security.login.failureWindowSeconds", config.get("security.login.failureWindowSeconds")),
    }),
    handler: Object.freeze({
      className: config.get("security.authentication.handlerClassName"),
      loginModule: config.get("security.authentication.loginmodule.className"),
      realmFile: config.get("security.authentication.basic.realmfile"),
      properties: config.handlerProperties(),
      baseDir,
    }),
    redisUrl: config.get("redis.url"),
  });
}

/**
 * Where clients get tokens, for the gateway's 401 hint: `http(s)://<address>:<port>/token` from the same keys
 * the token server reads.
 */
export function tokenServerUrl(config: CorralConfig): string {
  const scheme = config.get("security.auth.server.ssl.keystore.path") ? "https" : "http";
  const host = config.get("security.auth.server.address");
  return `${scheme}://${host.includes(":") ? `[${host}]` : host}:${config.get("security.auth.server.bind.port")}/token`;
}
