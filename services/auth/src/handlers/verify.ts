import { UnauthorizedError, UnavailableError } from "@corral/contracts";
import type { EndpointHandlers } from "@corral/shared";
import type { TokenVerifier } from "../verifier.js";

/**
 * `corral.auth.verify`: `{token}` -> its claims (`VerifiedToken`), or 401 with the reason. For services that are
 * handed a token; the gateway verifies locally with the same code and needs no round trip.
 */
export function verifyHandlers(verifier: TokenVerifier) {
  return {
    "auth.verify": async ({ token }) => {
      const check = await verifier.verify(token);
      if (!check.ok) throw check.unavailable ? new UnavailableError(check.reason) : new UnauthorizedError(check.reason);
      const c = check.claims;
      return {
        userId: c.userId,
        roles: c.roles,
        issuedAt: c.issuedAtMs,
        expiresAt: c.expiresAtMs,
        tokenId: c.tokenId,
        // This service's verifier takes Corral's tokens only, whose binding always has a uid.
        ...(c.tenant?.uid !== undefined ? { tenant: { name: c.tenant.name, uid: c.tenant.uid } } : {}),
      };
    },
  } satisfies EndpointHandlers<"auth">;
}
