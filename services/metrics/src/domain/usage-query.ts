import { BadRequestError, CorralError, ForbiddenError, type Identity, type QueryOf } from "@corral/contracts";

/**
 * Who may see which node usage, as a pure decision on the caller and the query.
 * See services/metrics/README.md "Node usage: access".
 */

/** Whose nodes a usage figure sums. */
export type UsageScope =
  | { kind: "all" }
  | { kind: "tenant"; tenant: string }
  | { kind: "tenantUser"; tenant: string; user: string }
  | { kind: "user"; user: string };

/** A checked node-usage request: the scope and the window, in Unix seconds. */
export interface UsageQuery {
  scope: UsageScope;
  /** Absent: the scope's earliest recorded node creation (0 when it has none), never after `end`. */
  start?: number;
  /** The given end, or now. */
  end: number;
}

/** Largest accepted timestamp (year 33658); keeps every computation exact in doubles. */
export const MAX_TIMESTAMP_SECONDS = 1e12;

/** 405: a tenant-level query from a caller that is not the superadmin. */
export class TenantUsageNotAllowedError extends CorralError {
  constructor(tenant: string, caller: string) {
    // No method reads another tenant's usage for this caller: an empty `Allow`.
    super(405, "not_allowed", `getting node usage of tenant ${tenant} is not allowed for tenant ${caller}`, { allowed: [] });
  }
}

function parseTimestamp(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,13}$/.test(raw) || Number(raw) > MAX_TIMESTAMP_SECONDS) {
    throw new BadRequestError(`${name} must be a Unix time in whole seconds, got "${raw}"`, { field: name });
  }
  return Number(raw);
}

function parseText(name: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (raw.length === 0 || raw.length > 255) {
    throw new BadRequestError(`${name} must be a name of 1 to 255 characters`, { field: name });
  }
  return raw;
}

/**
 * Turns the caller and the query parameters (`start`, `end`, `user`, `tenant`) into a scope and window.
 * Checks in order: `tenant` from a non-superadmin (405), another user's usage asked by an ordinary user (403),
 * then the parameters (400). `nowSeconds` is the default end.
 */
export function resolveUsageQuery(identity: Identity, query: QueryOf<"metrics.nodeUsage">, nowSeconds: number): UsageQuery {
  const tenantParam = query["tenant"];
  const userParam = query["user"];
  if (tenantParam !== undefined && identity.role !== "superadmin") {
    throw new TenantUsageNotAllowedError(tenantParam, identity.tenant);
  }
  if (identity.role === "user" && userParam !== undefined && userParam !== identity.userId) {
    throw new ForbiddenError(`user ${identity.userId} may only see its own node usage`);
  }
  const tenant = parseText("tenant", tenantParam);
  const user = parseText("user", userParam);
  const start = parseTimestamp("start", query["start"]);
  const givenEnd = parseTimestamp("end", query["end"]);
  const end = givenEnd ?? nowSeconds;
  if (start !== undefined && end < start) {
    const why = givenEnd === undefined ? ` (end defaults to now, ${nowSeconds})` : "";
    throw new BadRequestError(`end ${end} is before start ${start}${why}`, { field: "end" });
  }
  let scope: UsageScope;
  if (identity.role === "superadmin") {
    if (tenant !== undefined) scope = user !== undefined ? { kind: "tenantUser", tenant, user } : { kind: "tenant", tenant };
    else scope = user !== undefined ? { kind: "user", user } : { kind: "all" };
  } else if (identity.role === "admin") {
    scope = user !== undefined ? { kind: "tenantUser", tenant: identity.tenant, user } : { kind: "tenant", tenant: identity.tenant };
  } else {
    scope = { kind: "tenantUser", tenant: identity.tenant, user: identity.userId };
  }
  return start === undefined ? { scope, end } : { scope, start, end };
}
