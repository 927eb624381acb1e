import { connectedMulti, type RedisClient } from "@corral/shared";

/**
 * Failed-login throttling in Redis, shared by every token server instance. Each failed login increments two
 * fixed-window counters, one for the user name and one for the client address, that expire `windowSeconds`
 * after the first failure of the window. While a counter is at its limit, logins for that user or from that
 * address are refused with 429 and `Retry-After` (the counter's remaining time) without asking the backend,
 * so correct passwords are refused too until the window ends. A successful login clears the user's counter
 * (not the address's: one valid account must not unlock guessing at others).
 */
export interface LoginThrottle {
  /** Seconds to wait when the user or address is blocked; 0 when a login may be tried. */
  blockedForSeconds(user: string, address: string): Promise<number>;
  recordFailure(user: string, address: string): Promise<void>;
  recordSuccess(user: string): Promise<void>;
}

export interface LoginThrottleOptions {
  maxFailuresPerUser: number;
  maxFailuresPerAddress: number;
  windowSeconds: number;
}

const userKey = (user: string) => `corral:auth:failures:user:${encodeURIComponent(user)}`;
const addressKey = (address: string) => `corral:auth:failures:addr:${address}`;

export function loginThrottle(redis: RedisClient, options: LoginThrottleOptions): LoginThrottle {
  const limits = [options.maxFailuresPerUser, options.maxFailuresPerAddress];
  return {
    async blockedForSeconds(user, address) {
      const keys = [userKey(user), addressKey(address)];
      const counts = await redis.mGet(keys);
      let waitMs = 0;
      for (let i = 0; i < keys.length; i++) {
        const limit = limits[i]!;
        if (limit > 0 && Number(counts[i] ?? 0) >= limit) {
          const ttl = await redis.pTTL(keys[i]!);
          waitMs = Math.max(waitMs, ttl > 0 ? ttl : options.windowSeconds * 1000);
        }
      }
      return Math.ceil(waitMs / 1000);
    },
    async recordFailure(user, address) {
      const multi = connectedMulti(redis);
      for (const key of [userKey(user), addressKey(address)]) {
        multi.incr(key).expire(key, options.windowSeconds, "NX");
      }
      await multi.exec();
    },
    async recordSuccess(user) {
      await redis.del(userKey(user));
    },
  };
}
