import type { IncomingMessage, ServerResponse } from "node:http";
import { ADMIN_USER, SUPERADMIN_TENANT, type AuditEntry } from "@corral/contracts";
import { requestIdOf, type AuditLog } from "@corral/shared";

/** Who a token-server request was made by, as far as it got: the user a login names, a revoking token's user. */
export interface TokenCaller {
  user: string;
  tenant?: string;
  /** The role the login grants, when known (single sign-on); otherwise told by the user's name. */
  role?: AuditEntry["role"];
}

/**
 * What the token server records in the audit log: every login, failed or not (single sign-on's callback included),
 * and every revocation.
 */
export interface TokenAudit {
  /** Records `req` once its answer went out, under `action` and `route` (a template: `/tokens/:user`). */
  observe(req: IncomingMessage, res: ServerResponse, action: string, route: string, target?: string): void;
  /** The caller, once the request has named it. */
  caller(req: IncomingMessage, caller: TokenCaller): void;
}

function roleOf(caller: TokenCaller | undefined): AuditEntry["role"] {
  if (!caller?.tenant) return "";
  if (caller.role !== undefined) return caller.role;
  return caller.user !== ADMIN_USER ? "user" : caller.tenant === SUPERADMIN_TENANT ? "superadmin" : "admin";
}

export function tokenAudit(auditLog: AuditLog | undefined, clock: () => number): TokenAudit {
  const callers = new WeakMap<IncomingMessage, TokenCaller>();
  return {
    observe(req, res, action, route, target = "") {
      if (!auditLog) return;
      const header = req.headers["x-request-id"];
      const requestId = requestIdOf(typeof header === "string" ? header : undefined);
      const address = req.socket.remoteAddress ?? "";
      res.once("finish", () => {
        const caller = callers.get(req);
        auditLog.record({
          time: new Date(clock()).toISOString(),
          tenant: caller?.tenant ?? "",
          user: caller?.user ?? "",
          role: roleOf(caller),
          method: req.method ?? "GET",
          route,
          action,
          target,
          status: res.statusCode,
          requestId,
          source: address.startsWith("::ffff:") ? address.slice(7) : address,
        });
      });
    },
    caller(req, caller) {
      callers.set(req, caller);
    },
  };
}
