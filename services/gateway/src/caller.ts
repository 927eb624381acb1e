import type { Identity } from "@corral/contracts";
import { resolveIdentity } from "./identity.js";
import type { Authentication, GatewaySecurity } from "./security.js";
import type { TenantDirectory } from "./tenant-directory.js";

/** What identifies a caller in a request's headers. */
export interface CallerHead {
  userId: string;
  tenant: string;
  authorization: string;
}

/** REST's identity and token rules, for every kind of request the gateway takes (REST, event streams). */
export interface CallerCheck {
  /** The Bearer token, checked first (before the path is looked at); undefined when security is off. */
  authenticate(authorization: string): Promise<Authentication | undefined>;
  /** The identity headers, with the token's role; throws a 401 CorralError. */
  identify(head: CallerHead, auth: Authentication | undefined): Promise<Identity>;
  /** Why a long-lived connection's token no longer holds (expired, revoked); undefined while it does. */
  tokenProblem(authorization: string): Promise<string | undefined>;
}

export function callerCheck(security: GatewaySecurity | undefined, directory: TenantDirectory): CallerCheck {
  return {
    authenticate: async (authorization) => (security ? await security.authenticate(authorization) : undefined),
    async identify(head, auth) {
      const headerIdentity = await resolveIdentity(head.userId, head.tenant, directory);
      return auth?.ok ? await auth.session.identify(headerIdentity, directory) : headerIdentity;
    },
    async tokenProblem(authorization) {
      if (!security) return undefined;
      const auth = await security.authenticate(authorization);
      return auth.ok ? undefined : auth.denial.message;
    },
  };
}
