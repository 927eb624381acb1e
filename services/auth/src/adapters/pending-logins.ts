import type { RedisClient } from "@corral/shared";

/**
 * Browser sign-ins under way through the identity provider, in Redis so that any token server instance can finish
 * one another started: the PKCE verifier and nonce by the state sent to the provider, for
 * {@link PENDING_LOGIN_SECONDS}, and taken (read and deleted at once) by the callback, so each is used once.
 */
export interface PendingLogin {
  codeVerifier: string;
  nonce: string;
}

export interface PendingLogins {
  put(state: string, login: PendingLogin): Promise<void>;
  /** The login started with `state`, removed; undefined when there is none (expired, used, or never started). */
  take(state: string): Promise<PendingLogin | undefined>;
}

/** How long a user may take at the provider's login page. */
export const PENDING_LOGIN_SECONDS = 600;

const keyOf = (state: string) => `corral:auth:oidc:login:${state}`;

export function pendingLogins(redis: RedisClient): PendingLogins {
  return {
    async put(state, login) {
      await redis.set(keyOf(state), JSON.stringify(login), { expiration: { type: "EX", value: PENDING_LOGIN_SECONDS } });
    },
    async take(state) {
      const text = await redis.getDel(keyOf(state));
      if (!text) return undefined;
      const value = JSON.parse(text) as Partial<PendingLogin>;
      return typeof value.codeVerifier === "string" && typeof value.nonce === "string" ? { codeVerifier: value.codeVerifier, nonce: value.nonce } : undefined;
    },
  };
}
