import type { Logger } from "@corral/shared";
import type { TokenClaims } from "../domain/token.js";
import { connectRedis, type RedisClient } from "./redis.js";

/**
 * Token revocation in Redis (DESIGN.md: Redis holds token revocations):
 * - `corral:auth:revoked:tokens`, a sorted set of revoked token ids scored by their expiry (ms); entries past
 *   their expiry are pruned, since an expired token is refused anyway;
 * - `corral:auth:revoked:users`, a hash user -> ms instant: every token of that user issued at or before it
 *   is revoked ("log out everywhere");
 * - channel `corral:auth:revocations` announces each revocation.
 *
 * Verifiers (gateways) keep the whole list in memory: loaded at start and after every Redis reconnect, kept
 * current by the channel, and re-read every `resyncMs` as a safety net for a lost message. A request costs no
 * round trip; a revocation takes effect within the channel's delivery time (milliseconds). While Redis is
 * unreachable the last known list stays in force (tokens still expire); the token server refuses to revoke
 * (503) rather than pretend.
 */
export const REVOKED_TOKENS_KEY = "corral:auth:revoked:tokens";
export const REVOKED_USERS_KEY = "corral:auth:revoked:users";
export const REVOCATIONS_CHANNEL = "corral:auth:revocations";

type Announcement = { kind: "token"; tokenId: string; expiresAtMs: number } | { kind: "user"; userId: string; beforeMs: number };

/** The writing side, used by the token server. */
export interface RevocationStore {
  revokeToken(claims: TokenClaims, nowMs: number): Promise<void>;
  /** Revokes every token of `userId` issued at or before `beforeMs`. */
  revokeUser(userId: string, beforeMs: number): Promise<void>;
}

export function revocationStore(redis: RedisClient): RevocationStore {
  const announce = (a: Announcement) => redis.publish(REVOCATIONS_CHANNEL, JSON.stringify(a));
  return {
    async revokeToken(claims, nowMs) {
      await redis
        .multi()
        .zAdd(REVOKED_TOKENS_KEY, { score: claims.expiresAtMs, value: claims.tokenId })
        .zRemRangeByScore(REVOKED_TOKENS_KEY, "-inf", nowMs)
        .exec();
      await announce({ kind: "token", tokenId: claims.tokenId, expiresAtMs: claims.expiresAtMs });
    },
    async revokeUser(userId, beforeMs) {
      await redis.hSet(REVOKED_USERS_KEY, userId, String(beforeMs));
      await announce({ kind: "user", userId, beforeMs });
    },
  };
}

/** The reading side: an in-memory copy of the revocations, kept current. */
export interface RevocationList {
  isRevoked(claims: TokenClaims, nowMs: number): boolean;
  stop(): Promise<void>;
}

export interface RevocationListOptions {
  redisUrl: string;
  log: Logger;
  /** Full re-read interval. @default 30_000 ms */
  resyncMs?: number;
  /** @default Date.now */
  clock?: () => number;
}

export async function openRevocationList(options: RevocationListOptions): Promise<RevocationList> {
  const { log } = options;
  const clock = options.clock ?? Date.now;
  const tokens = new Map<string, number>();
  const users = new Map<string, number>();
  const reader = await connectRedis(options.redisUrl, log, "corral-revocations");
  const subscriber = reader.duplicate();
  subscriber.on("error", () => {}); // the reader's listener already reports outages

  const apply = (a: Announcement): void => {
    if (a.kind === "token") tokens.set(a.tokenId, a.expiresAtMs);
    else users.set(a.userId, Math.max(users.get(a.userId) ?? -Infinity, a.beforeMs));
  };
  const reload = async (): Promise<void> => {
    const now = clock();
    const [ids, revokedUsers] = await Promise.all([
      reader.zRangeByScoreWithScores(REVOKED_TOKENS_KEY, now, "+inf"),
      reader.hGetAll(REVOKED_USERS_KEY),
    ]);
    for (const { value, score } of ids) tokens.set(value, score);
    for (const [userId, before] of Object.entries(revokedUsers)) apply({ kind: "user", userId, beforeMs: Number(before) });
    for (const [id, exp] of tokens) if (exp <= now) tokens.delete(id);
  };
  const reloadLogged = () => void reload().catch((err: unknown) => log.warn("reading token revocations failed", { err }));

  await subscriber.connect();
  await subscriber.subscribe(REVOCATIONS_CHANNEL, (message) => {
    try {
      apply(JSON.parse(message) as Announcement);
    } catch (err) {
      log.warn("ignoring an unreadable revocation announcement", { err });
    }
  });
  // Subscribe first, then read: a revocation between the two is seen by at least one of them.
  await reload();
  subscriber.on("ready", reloadLogged);
  const timer = setInterval(reloadLogged, options.resyncMs ?? 30_000);
  timer.unref();

  let stopping: Promise<void> | undefined;
  return {
    isRevoked(claims, nowMs) {
      const exp = tokens.get(claims.tokenId);
      if (exp !== undefined) {
        if (exp > nowMs) return true;
        tokens.delete(claims.tokenId);
      }
      const before = users.get(claims.userId);
      return before !== undefined && claims.issuedAtMs <= before;
    },
    stop() {
      stopping ??= (async () => {
        clearInterval(timer);
        await Promise.allSettled([subscriber.close(), reader.close()]);
      })();
      return stopping;
    },
  };
}
