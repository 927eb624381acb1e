import { createHash } from "node:crypto";
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from "jose";
import type { TokenCheck, TokenClaims } from "../domain/token.js";
import { identityFromClaims } from "./claims.js";
import { ProviderUnavailableError, type OidcProvider } from "./provider.js";
import { isLoopbackUrl, type OidcSettings } from "./settings.js";

/**
 * Checks JWTs the identity provider issued, for gateways that accept them as Bearer tokens
 * (`security.oidc.bearer.enabled`; docs/security.md, Single sign-on): the signature against the provider's JWKS
 * (read again when a token names a key not seen yet, at most once per cooldown), then issuer, audience, expiry and
 * not-before, then the claims mapped as a browser sign-in maps them. The result is a token check like that of
 * Corral's own tokens, bound by name to the tenant the claims give.
 */
export interface OidcBearerVerifier {
  verify(token: string): Promise<TokenCheck>;
}

/** Asymmetric algorithms only: an HMAC would make the client secret a signing key, `none` signs nothing. */
const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"];
/** Clock skew allowed between the provider and this host. */
const CLOCK_TOLERANCE_SECONDS = 30;
const JWKS_TIMEOUT_MS = 5_000;
/** What {@link TokenCheck} names as the key of a provider's token. */
export const PROVIDER_KEY_ID = "oidc";

/** A JWT is three base64url parts; Corral's own tokens are one. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

function refusal(err: unknown): TokenCheck {
  const fail = (reason: string): TokenCheck => ({ ok: false, reason, keyId: PROVIDER_KEY_ID });
  if (err instanceof errors.JWTExpired) return fail("the token has expired");
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === "aud") return fail("the token is not meant for Corral (its audience is another)");
    if (err.claim === "iss") return fail("the token was not issued by the configured identity provider");
    if (err.claim === "nbf") return fail("the token is not valid yet");
    return fail(`the token's ${err.claim} claim is not accepted: ${err.reason}`);
  }
  if (err instanceof errors.JWKSNoMatchingKey) return fail("the token was signed with a key the identity provider does not publish");
  if (err instanceof errors.JWSSignatureVerificationFailed) return fail("the token signature is invalid");
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) return fail("the token's signing algorithm is not accepted");
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid || err instanceof errors.JWKSMultipleMatchingKeys) {
    return fail("the token is malformed");
  }
  // The keys could not be fetched or read: the token is not known to be bad.
  return { ok: false, reason: `the identity provider's signing keys cannot be read now: ${(err as Error).message}`, keyId: PROVIDER_KEY_ID, unavailable: true };
}

function claimsOf(payload: JWTPayload, token: string, identity: { userId: string; tenant: string; roles: string[] }): TokenClaims {
  const jti = typeof payload.jti === "string" && payload.jti ? payload.jti : createHash("sha256").update(token).digest("base64url");
  return {
    userId: identity.userId,
    roles: identity.roles,
    // No iat: as old as can be, so "revoke every token of this user" covers it.
    issuedAtMs: typeof payload.iat === "number" ? payload.iat * 1000 : 0,
    expiresAtMs: payload.exp! * 1000,
    tokenId: `oidc:${jti}`,
    tenant: { name: identity.tenant },
  };
}

export function oidcBearerVerifier(settings: OidcSettings, provider: OidcProvider, clock: () => number): OidcBearerVerifier {
  let jwks: { uri: string; keys: ReturnType<typeof createRemoteJWKSet> } | undefined;
  const keysAt = (uri: string) => {
    if (jwks?.uri === uri) return jwks.keys;
    const url = new URL(uri);
    if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackUrl(url))) {
      throw new ProviderUnavailableError(`the identity provider's jwks_uri ${uri} is not https`);
    }
    jwks = { uri, keys: createRemoteJWKSet(url, { cooldownDuration: settings.jwksCooldownMs, timeoutDuration: JWKS_TIMEOUT_MS }) };
    return jwks.keys;
  };
  return {
    async verify(token) {
      let verified: JWTPayload;
      try {
        const metadata = (await provider.configuration()).serverMetadata();
        if (!metadata.jwks_uri) throw new ProviderUnavailableError("the identity provider publishes no jwks_uri");
        ({ payload: verified } = await jwtVerify(token, keysAt(metadata.jwks_uri), {
          issuer: metadata.issuer,
          audience: settings.audience,
          algorithms: ALGORITHMS,
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          currentDate: new Date(clock()),
          requiredClaims: ["exp"],
        }));
      } catch (err) {
        if (err instanceof ProviderUnavailableError) return { ok: false, reason: err.message, keyId: PROVIDER_KEY_ID, unavailable: true };
        return refusal(err);
      }
      const reading = identityFromClaims(verified, settings.claims);
      if (!reading.ok) return { ok: false, reason: reading.reason, keyId: PROVIDER_KEY_ID };
      return { ok: true, claims: claimsOf(verified, token, reading.identity), keyId: PROVIDER_KEY_ID };
    },
  };
}
