import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "@corral/shared";
import { openRevocationList, type RevocationList } from "./adapters/revocations.js";
import { openSigningKeys, type SigningKeys } from "./adapters/signing-keys.js";
import { checkExpiry, checkSignature, tokenKeyId, type TokenCheck, type TokenClaims } from "./domain/token.js";
import { looksLikeJwt, oidcBearerVerifier, type OidcBearerVerifier } from "./oidc/bearer.js";
import { oidcProvider } from "./oidc/provider.js";
import type { OidcSettings } from "./oidc/settings.js";

/**
 * Verifies access tokens locally: signature against the signing keys watched from KV, expiry against the
 * clock, revocation against the in-memory revocation list watched from Redis (unavailable, 503, until it was read
 * once). No request leaves the process, except a one-off bucket read for a key id not seen yet. Signature checks are cached per token string
 * (expiry and revocation are checked on every call). With `oidc` settings that accept Bearer tokens, JWTs of the
 * identity provider are checked too (oidc/bearer.ts), and the revocation list applies to them as well.
 */
export interface TokenVerifier {
  verify(token: string): Promise<TokenCheck>;
  stop(): Promise<void>;
}

export interface TokenVerifierOptions {
  nc: NatsConnection;
  log: Logger;
  redisUrl: string;
  /** @default Date.now */
  clock?: () => number;
  /** Tokens whose signature check is remembered. @default 10_000 */
  cacheSize?: number;
  /** Single sign-on settings (`readOidcSettings`); the provider's JWTs are accepted when they say so. @default none */
  oidc?: OidcSettings;
}

interface Cached {
  claims: TokenClaims;
  keyId: string;
  /** The secret that verified it: a replaced or deleted key invalidates the entry. */
  secret: Buffer;
}

const REVOCATIONS_UNKNOWN =
  "Redis is unavailable: the token revocation list has not been read yet, so no token is accepted; try again later";

export async function openTokenVerifier(options: TokenVerifierOptions): Promise<TokenVerifier> {
  const clock = options.clock ?? Date.now;
  const cacheSize = options.cacheSize ?? 10_000;
  const keys: SigningKeys = await openSigningKeys({ nc: options.nc, log: options.log, clock });
  let revocations: RevocationList;
  try {
    revocations = await openRevocationList({ redisUrl: options.redisUrl, log: options.log, clock });
  } catch (err) {
    keys.stop();
    throw err;
  }
  const cache = new Map<string, Cached>();
  const providerTokens: OidcBearerVerifier | undefined = options.oidc?.acceptBearer
    ? oidcBearerVerifier(options.oidc, oidcProvider(options.oidc, options.log, clock), clock)
    : undefined;

  const signatureOf = async (token: string): Promise<TokenCheck> => {
    const hit = cache.get(token);
    if (hit && keys.secretOf(hit.keyId) === hit.secret) return { ok: true, claims: hit.claims, keyId: hit.keyId };
    if (hit) cache.delete(token);
    const keyId = tokenKeyId(token);
    if (!keyId) return { ok: false, reason: "the token is malformed" };
    const secret = keys.secretOf(keyId) ?? (await keys.lookup(keyId));
    const check = checkSignature(token, () => secret);
    if (check.ok && secret) {
      if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!);
      cache.set(token, { claims: check.claims, keyId, secret });
    }
    return check;
  };

  let stopping: Promise<void> | undefined;
  return {
    async verify(token) {
      const isJwt = looksLikeJwt(token);
      if (isJwt && !providerTokens) return { ok: false, reason: "identity provider tokens are not accepted here; get a token at the token server" };
      const signed = isJwt ? await providerTokens!.verify(token) : await signatureOf(token);
      if (!signed.ok) return signed;
      const now = clock();
      const timely = checkExpiry(signed.claims, signed.keyId, now);
      if (!timely.ok) return timely;
      const revocation = revocations.statusOf(signed.claims, now);
      if (revocation === "revoked") return { ok: false, reason: "the token has been revoked", keyId: signed.keyId };
      if (revocation === "unknown") return { ok: false, reason: REVOCATIONS_UNKNOWN, keyId: signed.keyId, unavailable: true };
      return timely;
    },
    stop() {
      stopping ??= (async () => {
        keys.stop();
        await revocations.stop();
      })();
      return stopping;
    },
  };
}
