import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { TenantBinding } from "./tenant-binding.js";

/**
 * Access tokens: opaque, base64url-encoded, HMAC-SHA256-signed. Pure code (no I/O, no clock: times are passed
 * in), shared by the token server that signs and the gateways that verify.
 *
 * Serialized form, before base64url:
 * `u8 version (1) | u8 key-id length | key id (ASCII) | claims (UTF-8 JSON) | 32-byte HMAC-SHA256 over all before`.
 * The key id names the signing key in the `corral_auth_keys` bucket, so keys can be added without
 * invalidating tokens signed with older ones.
 */

const VERSION = 1;
const MAC_BYTES = 32;
/** Tokens longer than this are refused before any work (a header can be large; a token is ~200 bytes). */
export const MAX_TOKEN_CHARS = 4096;
/** A key id is a short token of `[A-Za-z0-9_-]`. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** What a token says about its bearer. */
export interface TokenClaims {
  /** The authenticated user name. */
  userId: string;
  /** Roles from the realm file, LDAP groups or the custom handler. */
  roles: string[];
  /** Issue time, ms since the epoch. */
  issuedAtMs: number;
  /** Expiry time, ms since the epoch; the token is invalid from this instant on. */
  expiresAtMs: number;
  /** Random id, the handle for revoking this one token. */
  tokenId: string;
  /** The tenant named at login; absent: the token is the user's in every tenant (tokens carried none before). */
  tenant?: TenantBinding;
}

/** A signing key. */
export interface SigningKey {
  id: string;
  secret: Buffer;
}

/** Why a token was refused; `reason` is safe to show to the caller. */
export type TokenCheck =
  | { ok: true; claims: TokenClaims; keyId: string }
  /** `unavailable`: the token could not be checked now (503), rather than found bad (401). */
  | { ok: false; reason: string; keyId?: string; unavailable?: true };

interface WireClaims {
  sub: string;
  roles: string[];
  iat: number;
  exp: number;
  jti: string;
  ten?: string;
  tuid?: string;
}

/** A new random token id (128 bits, base64url). */
export function newTokenId(): string {
  return randomBytes(16).toString("base64url");
}

/** A new random signing secret (256 bits). */
export function newSecret(): Buffer {
  return randomBytes(32);
}

function mac(secret: Buffer, data: Buffer): Buffer {
  return createHmac("sha256", secret).update(data).digest();
}

/** Serializes and signs claims with `key`; returns the access token string. */
export function signToken(claims: TokenClaims, key: SigningKey): string {
  if (!KEY_ID_PATTERN.test(key.id)) throw new Error(`invalid signing key id ${JSON.stringify(key.id)}`);
  if (claims.tenant && claims.tenant.uid === undefined) throw new Error("a signed token binds its tenant by uid");
  const wire: WireClaims = {
    sub: claims.userId,
    roles: claims.roles,
    iat: claims.issuedAtMs,
    exp: claims.expiresAtMs,
    jti: claims.tokenId,
    ...(claims.tenant ? { ten: claims.tenant.name, tuid: claims.tenant.uid } : {}),
  };
  const kid = Buffer.from(key.id, "ascii");
  const body = Buffer.concat([Buffer.from([VERSION, kid.length]), kid, Buffer.from(JSON.stringify(wire), "utf8")]);
  return Buffer.concat([body, mac(key.secret, body)]).toString("base64url");
}

/** Reads the key id of a token without checking anything else; undefined when it is not a token. */
export function tokenKeyId(token: string): string | undefined {
  if (token.length === 0 || token.length > MAX_TOKEN_CHARS) return undefined;
  const bytes = decodeBase64(token);
  if (!bytes || bytes.length < 2 + MAC_BYTES || bytes[0] !== VERSION) return undefined;
  const kidLength = bytes[1] ?? 0;
  if (bytes.length < 2 + kidLength + MAC_BYTES) return undefined;
  const kid = bytes.subarray(2, 2 + kidLength).toString("ascii");
  return KEY_ID_PATTERN.test(kid) ? kid : undefined;
}

/**
 * Checks signature, shape and expiry. `keyFor` returns the secret of a key id (undefined: unknown key).
 * Revocation is not checked here (it is state, see the revocation list).
 */
export function verifyToken(token: string, keyFor: (keyId: string) => Buffer | undefined, nowMs: number): TokenCheck {
  const signed = checkSignature(token, keyFor);
  if (!signed.ok) return signed;
  return checkExpiry(signed.claims, signed.keyId, nowMs);
}

/** The expiry half of {@link verifyToken}, for callers that cache signature checks. */
export function checkExpiry(claims: TokenClaims, keyId: string, nowMs: number): TokenCheck {
  if (nowMs >= claims.expiresAtMs) return { ok: false, reason: "the token has expired", keyId };
  return { ok: true, claims, keyId };
}

/** The signature and shape half of {@link verifyToken}: no clock involved, so the result can be cached. */
export function checkSignature(token: string, keyFor: (keyId: string) => Buffer | undefined): TokenCheck {
  const keyId = tokenKeyId(token);
  if (!keyId) return { ok: false, reason: "the token is malformed" };
  const secret = keyFor(keyId);
  if (!secret) return { ok: false, reason: "the token was signed with an unknown key", keyId };
  const bytes = decodeBase64(token)!;
  const body = bytes.subarray(0, bytes.length - MAC_BYTES);
  const given = bytes.subarray(bytes.length - MAC_BYTES);
  if (!timingSafeEqual(given, mac(secret, body))) return { ok: false, reason: "the token signature is invalid", keyId };
  const claims = parseClaims(body.subarray(2 + keyId.length));
  if (!claims) return { ok: false, reason: "the token is malformed", keyId };
  return { ok: true, claims, keyId };
}

function parseClaims(json: Buffer): TokenClaims | undefined {
  let value: unknown;
  try {
    value = JSON.parse(json.toString("utf8"));
  } catch {
    return undefined;
  }
  if (!value || typeof value !== "object") return undefined;
  const w = value as Partial<WireClaims>;
  if (typeof w.sub !== "string" || !w.sub) return undefined;
  if (!Array.isArray(w.roles) || !w.roles.every((r) => typeof r === "string")) return undefined;
  if (typeof w.iat !== "number" || typeof w.exp !== "number" || typeof w.jti !== "string") return undefined;
  const claims: TokenClaims = { userId: w.sub, roles: w.roles, issuedAtMs: w.iat, expiresAtMs: w.exp, tokenId: w.jti };
  if (w.ten === undefined && w.tuid === undefined) return claims;
  if (typeof w.ten !== "string" || !w.ten || typeof w.tuid !== "string") return undefined;
  return { ...claims, tenant: { name: w.ten, uid: w.tuid } };
}

/** Accepts base64url and standard base64 (clients sometimes re-encode); undefined for anything else. */
function decodeBase64(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return undefined;
  return Buffer.from(text.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""), "base64url");
}
