import type { CorralConfig } from "@corral/shared";

/** How an identity provider's claims become a Corral identity (docs/security.md, Single sign-on). */
export interface ClaimMapping {
  /** `security.oidc.userClaim`. */
  userClaim: string;
  /** `security.oidc.tenantClaim`; "" reads no claim (every user gets `defaultTenant`). */
  tenantClaim: string;
  /** `security.oidc.defaultTenant`; "" refuses a token without a tenant claim. */
  defaultTenant: string;
  /** `security.oidc.roleClaim`. */
  roleClaim: string;
  /** `security.oidc.adminRole`: the role claim value of a tenant admin. */
  adminRole: string;
  /** `security.oidc.superadminRole`; "" makes nobody the superadmin. */
  superadminRole: string;
}

/** The `security.oidc.*` keys, checked. Present only when `security.oidc.issuer` is set. */
export interface OidcSettings {
  issuer: URL;
  /** Shown on the console's button: `Sign in with <providerName>`. */
  providerName: string;
  clientId: string;
  /** "" for a public client (PKCE alone). */
  clientSecret: string;
  scopes: string;
  /** `security.oidc.redirectUri`; undefined: the token server's own `/oidc/callback`. */
  redirectUri?: URL;
  /** `security.oidc.consoleUrl`; undefined: the callback answers JSON. */
  consoleUrl?: URL;
  claims: ClaimMapping;
  /** Whether gateways accept the provider's JWTs as Bearer tokens. */
  acceptBearer: boolean;
  /** The `aud` such JWTs must carry: `security.oidc.bearer.audience`, else the client id. */
  audience: string;
  jwksCooldownMs: number;
}

const LOOPBACK_HOSTS = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|localhost)$/i;

/** Plain HTTP is allowed only to the provider on this machine (tests, a provider beside Corral). */
export function isLoopbackUrl(url: URL): boolean {
  return LOOPBACK_HOSTS.test(url.hostname);
}

function urlOf(key: string, value: string, { https }: { https: boolean }): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`config ${key} must be an absolute URL, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error(`config ${key} must be an http(s) URL, got ${value}`);
  if (https && url.protocol === "http:" && !isLoopbackUrl(url)) {
    throw new Error(`config ${key} must be an https:// URL (http:// only on the loopback interface), got ${value}`);
  }
  return url;
}

/** Reads and checks the `security.oidc.*` keys; undefined when no issuer is configured. Throws naming a bad key. */
export function readOidcSettings(config: CorralConfig): OidcSettings | undefined {
  const issuerText = config.get("security.oidc.issuer").trim();
  if (!issuerText) return undefined;
  const clientId = config.get("security.oidc.clientId").trim();
  if (!clientId) throw new Error("config security.oidc.clientId is required with security.oidc.issuer");
  const scopes = config.get("security.oidc.scopes").trim().split(/\s+/);
  if (!scopes.includes("openid")) throw new Error("config security.oidc.scopes must include openid");
  const userClaim = config.get("security.oidc.userClaim").trim();
  if (!userClaim) throw new Error("config security.oidc.userClaim must name a claim");
  const tenantClaim = config.get("security.oidc.tenantClaim").trim();
  const defaultTenant = config.get("security.oidc.defaultTenant").trim();
  if (!tenantClaim && !defaultTenant) {
    throw new Error("config security.oidc.tenantClaim or security.oidc.defaultTenant must be set: every token needs a tenant");
  }
  const cooldownSeconds = config.get("security.oidc.jwksCooldownSeconds");
  if (!Number.isFinite(cooldownSeconds) || cooldownSeconds < 0) {
    throw new Error(`config security.oidc.jwksCooldownSeconds must be a non-negative number, got ${cooldownSeconds}`);
  }
  const redirectUri = config.get("security.oidc.redirectUri").trim();
  const consoleUrl = config.get("security.oidc.consoleUrl").trim();
  return Object.freeze({
    issuer: urlOf("security.oidc.issuer", issuerText, { https: true }),
    providerName: config.get("security.oidc.providerName").trim() || "SSO",
    clientId,
    clientSecret: config.get("security.oidc.clientSecret"),
    scopes: scopes.join(" "),
    ...(redirectUri ? { redirectUri: urlOf("security.oidc.redirectUri", redirectUri, { https: false }) } : {}),
    ...(consoleUrl ? { consoleUrl: urlOf("security.oidc.consoleUrl", consoleUrl, { https: false }) } : {}),
    claims: Object.freeze({
      userClaim,
      tenantClaim,
      defaultTenant,
      roleClaim: config.get("security.oidc.roleClaim").trim(),
      adminRole: config.get("security.oidc.adminRole").trim(),
      superadminRole: config.get("security.oidc.superadminRole").trim(),
    }),
    acceptBearer: config.get("security.oidc.bearer.enabled"),
    audience: config.get("security.oidc.bearer.audience").trim() || clientId,
    jwksCooldownMs: cooldownSeconds * 1000,
  });
}

/** What a client is told to offer a person signing in: the provider's name and where the browser sign-in starts. */
export interface SignInDetails {
  provider: string;
  url: string;
}

/**
 * Where a browser starts signing in: beside the configured callback (`.../oidc/callback` -> `.../oidc/login`, so a
 * token server behind a proxy is named by its public address), else on the token server that `tokenUrl` names.
 */
export function signInDetails(settings: OidcSettings, tokenUrl: string): SignInDetails {
  const url = settings.redirectUri ? new URL("login", settings.redirectUri) : new URL("oidc/login", tokenUrl);
  return { provider: settings.providerName, url: url.href };
}
