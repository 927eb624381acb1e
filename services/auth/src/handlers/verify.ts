import { BadRequestError, UnauthorizedError, subjects, type Handler } from "@corral/shared";
import type { TenantBinding } from "../domain/tenant-binding.js";
import type { TokenVerifier } from "../verifier.js";

/** What `corral.auth.verify` answers for a valid token. */
export interface VerifiedToken {
  userId: string;
  roles: string[];
  /** ms since the epoch */
  issuedAt: number;
  /** ms since the epoch */
  expiresAt: number;
  tokenId: string;
  /** The tenant named at login and its uid then; absent for a token of the user in every tenant. */
  tenant?: TenantBinding;
}

/**
 * `corral.auth.verify`: `{token}` -> {@link VerifiedToken}, or 401 with the reason. For services that are
 * handed a token; the gateway verifies locally with the same code and needs no round trip.
 */
export function verifyHandlers(verifier: TokenVerifier): Record<string, Handler> {
  return {
    [subjects.auth.verify]: async (request: { token?: unknown } | undefined): Promise<VerifiedToken> => {
      const token = request?.token;
      if (typeof token !== "string" || !token) throw new BadRequestError("token must be a non-empty string", { field: "token" });
      const check = await verifier.verify(token);
      if (!check.ok) throw new UnauthorizedError(check.reason);
      const c = check.claims;
      return {
        userId: c.userId,
        roles: c.roles,
        issuedAt: c.issuedAtMs,
        expiresAt: c.expiresAtMs,
        tokenId: c.tokenId,
        ...(c.tenant ? { tenant: c.tenant } : {}),
      };
    },
  };
}
