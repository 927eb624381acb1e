import type { TokenClaims } from "../domain/token.js";
import { connectedMulti, openRedis, redisReady, REDIS_START_WAIT_MS, type Logger, type RedisClient } from "@corral/shared";

/**
 * Token revocation in Redis (docs/decisions.md, Redis holds only what can be rebuilt):
 * - `corral:auth:revoked:tokens`, a sorted set of revoked token ids scored by their expiry (ms); entries past
 *   their expiry are pruned, since an expired token is refused anyway;
 * - `corral:auth:revoked:users`, a hash user -> ms instant: every token of that user issued at or before it
 *   is revoked ("log out everywhere");
 * - channel `corral:auth:revocations` announces each revocation.
 *
 * Verifiers (gateways) keep the whole list in memory: loaded at start and after every Redis reconnect, kept
 * current by the channel, and re-read every `resyncMs` as a safety net for a lost message. A request costs no
 * round trip; a revocation takes effect within the channel's delivery time (milliseconds). While Redis is
 * unreachable the last list read stays in force (no revocation can be made then: the token server answers 503
 * rather than pretend), and a verifier that has not read it yet refuses every token (docs/security.md, Revocation fails closed).
 */
export const REVOKED_TOKENS_KEY = "corral:auth:revoked:tokens";
export const REVOKED_USERS_KEY = "corral:auth:revoked:users";
export const REVOCATIONS_CHANNEL = "corral:auth:revocations";

type Announcement = { kind: "token"; tokenId: string; expiresAtMs: number } | { kind: "user"; userId: string; beforeMs: number };
const announcement = (a: Announcement): string => JSON.stringify(a);

/** The writing side, used by the token server. */
export interface RevocationStore {
  revokeToken(claims: TokenClaims, nowMs: number): Promise<void>;
  /** Revokes every token of `userId` issued at or before `beforeMs`. */
  revokeUser(userId: string, beforeMs: number): Promise<void>;
}

export function revocationStore(redis: RedisClient): RevocationStore {
  const announce = (a: Announcement) => redis.publish(REVOCATIONS_CHANNEL, announcement(a));
  return {
    async revokeToken(claims, nowMs) {
      await connectedMulti(redis)
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

/**
 * A token's standing in the list: `unknown` until the list has been read from Redis once (a verifier that started
 * while Redis was down), when the token must be refused: it may have been revoked.
 */
export type RevocationStatus = "valid" | "revoked" | "unknown";

/** The reading side: an in-memory copy of the revocations, kept current. */
export interface RevocationList {
  statusOf(claims: TokenClaims, nowMs: number): RevocationStatus;
  stop(): Promise<void>;
}

export interface RevocationListOptions {
  redisUrl: string;
  log: Logger;
  /** Full re-read interval. @default 30_000 ms */
  resyncMs?: number;
  /** How long opening waits for the first read before it returns with the list unknown. @default REDIS_START_WAIT_MS */
  firstReadWaitMs?: number;
  /** @default Date.now */
  clock?: () => number;
}

/** Raises each user's instant to the given one unless Redis holds a later one already. */
const RAISE_USER_INSTANTS = `for i = 1, #ARGV, 2 do
  local current = tonumber(redis.call("HGET", KEYS[1], ARGV[i]) or "-1")
  if current < tonumber(ARGV[i + 1]) then redis.call("HSET", KEYS[1], ARGV[i], ARGV[i + 1]) end
end`;

export async function openRevocationList(options: RevocationListOptions): Promise<RevocationList> {
  const { log } = options;
  const clock = options.clock ?? Date.now;
  const tokens = new Map<string, number>();
  const users = new Map<string, number>();
  let loaded = false;
  const reader = openRedis({ url: options.redisUrl, log, name: "corral-revocations" });
  const subscriber = openRedis({ url: options.redisUrl, log, name: "corral-revocations-channel" });

  const apply = (a: Announcement): void => {
    if (a.kind === "token") tokens.set(a.tokenId, a.expiresAtMs);
    else users.set(a.userId, Math.max(users.get(a.userId) ?? -Infinity, a.beforeMs));
  };
  /**
   * Revocations this copy holds that Redis lacks (Redis restarted without its data) are written back, so the
   * verifiers that start later know them too, and announced for those that read the empty Redis a moment ago.
   */
  const restore = async (inRedisTokens: Set<string>, inRedisUsers: Record<string, string>, now: number): Promise<void> => {
    const lostTokens = [...tokens].filter(([id, exp]) => exp > now && !inRedisTokens.has(id));
    const lostUsers = [...users].filter(([userId, before]) => !(Number(inRedisUsers[userId]) >= before));
    if (lostTokens.length === 0 && lostUsers.length === 0) return;
    const multi = connectedMulti(reader);
    if (lostTokens.length > 0) multi.zAdd(REVOKED_TOKENS_KEY, lostTokens.map(([value, score]) => ({ value, score })));
    if (lostUsers.length > 0) {
      multi.eval(RAISE_USER_INSTANTS, { keys: [REVOKED_USERS_KEY], arguments: lostUsers.flatMap(([u, before]) => [u, String(before)]) });
    }
    for (const [tokenId, expiresAtMs] of lostTokens) multi.publish(REVOCATIONS_CHANNEL, announcement({ kind: "token", tokenId, expiresAtMs }));
    for (const [userId, beforeMs] of lostUsers) multi.publish(REVOCATIONS_CHANNEL, announcement({ kind: "user", userId, beforeMs }));
    await multi.exec();
    log.warn("Redis had lost token revocations: written back", { tokens: lostTokens.length, users: lostUsers.length });
  };
  /** Reads the whole list; answers what Redis holds, for {@link restore}. */
  const reload = async (now: number) => {
    const [ids, revokedUsers] = await Promise.all([
      reader.zRangeByScoreWithScores(REVOKED_TOKENS_KEY, now, "+inf"),
      reader.hGetAll(REVOKED_USERS_KEY),
    ]);
    for (const { value, score } of ids) tokens.set(value, score);
    for (const [userId, before] of Object.entries(revokedUsers)) apply({ kind: "user", userId, beforeMs: Number(before) });
    for (const [id, exp] of tokens) if (exp <= now) tokens.delete(id);
    return { inRedisTokens: new Set(ids.map((e) => e.value)), inRedisUsers: revokedUsers };
  };
  let subscribed: Promise<unknown> | undefined;
  const subscribe = () =>
    (subscribed ??= subscriber
      .subscribe(REVOCATIONS_CHANNEL, (message) => {
        try {
          apply(JSON.parse(message) as Announcement);
        } catch (err) {
          log.warn("ignoring an unreadable revocation announcement", { err });
        }
      })
      .catch((err: unknown) => {
        subscribed = undefined;
        throw err;
      }));
  // Subscribe first, then read: a revocation between the two is seen by at least one of them. The client
  // subscribes again by itself after a reconnect.
  const sync = async (): Promise<void> => {
    await subscribe();
    const now = clock();
    const inRedis = await reload(now);
    loaded = true;
    await restore(inRedis.inRedisTokens, inRedis.inRedisUsers, now);
  };
  let outage = false;
  const syncLogged = () =>
    sync().then(
      () => (outage = false),
      (err: unknown) => {
        if (!outage) log.warn("reading token revocations failed; retried when Redis is back", { err });
        outage = true;
      },
    );
  subscriber.on("ready", syncLogged);
  reader.on("ready", syncLogged);
  const timer = setInterval(syncLogged, options.resyncMs ?? 30_000);
  timer.unref();
  const waitMs = options.firstReadWaitMs ?? REDIS_START_WAIT_MS;
  const ready = await Promise.all([redisReady(subscriber, waitMs), redisReady(reader, waitMs)]);
  if (ready.every(Boolean)) await syncLogged();

  let stopping: Promise<void> | undefined;
  return {
    statusOf(claims, nowMs) {
      if (!loaded) return "unknown";
      const exp = tokens.get(claims.tokenId);
      if (exp !== undefined) {
        if (exp > nowMs) return "revoked";
        tokens.delete(claims.tokenId);
      }
      const before = users.get(claims.userId);
      return before !== undefined && claims.issuedAtMs <= before ? "revoked" : "valid";
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
