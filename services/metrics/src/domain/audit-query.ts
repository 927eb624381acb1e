import {
  AUDIT_PAGE_DEFAULT,
  BadRequestError,
  auditPositionOf,
  auditSubject,
  streamSubjects,
  streams,
  type AuditEntry,
  type AuditPosition,
  type Identity,
} from "@corral/contracts";

/** What `GET /audit` asks for, checked and decoded. */
export interface AuditQuery {
  sinceMs?: number;
  untilMs?: number;
  user?: string;
  /** An endpoint name, or a prefix of names when it ends in a dot. */
  action?: string;
  target?: string;
  limit: number;
  /** Only entries recorded before this position (a previous page's `next`). */
  before?: AuditPosition;
}

export interface AuditQueryText {
  since?: string;
  until?: string;
  user?: string;
  action?: string;
  target?: string;
  limit?: number;
  after?: string;
}

/** A time as ISO 8601 or milliseconds since the epoch; 400 otherwise. */
function timeOf(name: string, text: string | undefined): number | undefined {
  if (text === undefined || text === "") return undefined;
  const ms = /^[0-9]+$/.test(text) ? Number(text) : Date.parse(text);
  if (!Number.isFinite(ms)) throw new BadRequestError(`${name} is neither an ISO 8601 time nor milliseconds since the epoch`);
  return ms;
}

export function resolveAuditQuery(text: AuditQueryText): AuditQuery {
  const sinceMs = timeOf("since", text.since);
  const untilMs = timeOf("until", text.until);
  let before: AuditPosition | undefined;
  if (text.after !== undefined && text.after !== "") {
    before = auditPositionOf(text.after);
    if (!before) throw new BadRequestError("after is not the next of a page");
  }
  return {
    ...(sinceMs !== undefined ? { sinceMs } : {}),
    ...(untilMs !== undefined ? { untilMs } : {}),
    ...(text.user ? { user: text.user } : {}),
    ...(text.action ? { action: text.action } : {}),
    ...(text.target ? { target: text.target } : {}),
    limit: text.limit ?? AUDIT_PAGE_DEFAULT,
    ...(before !== undefined ? { before } : {}),
  };
}

/** The entries a caller may read: the superadmin every tenant's (and those of no tenant), a tenant admin its own. */
export function auditScopeOf(identity: Identity): string {
  return identity.role === "superadmin" ? streamSubjects[streams.audit] : auditSubject(identity.tenant);
}

export function matchesAudit(entry: AuditEntry, query: AuditQuery): boolean {
  if (query.untilMs !== undefined && Date.parse(entry.time) > query.untilMs) return false;
  if (query.user !== undefined && entry.user !== query.user) return false;
  if (query.target !== undefined && entry.target !== query.target) return false;
  if (query.action !== undefined) {
    const matches = query.action.endsWith(".") ? entry.action.startsWith(query.action) : entry.action === query.action;
    if (!matches) return false;
  }
  return true;
}
