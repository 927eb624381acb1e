import type { Identity } from "./api-request.js";

/**
 * One entry of the audit log (stream `CORRAL_AUDIT`): a request that changed something or was refused, or the end
 * of a plan. It names who, what and the outcome; never a request body or a secret.
 */
export interface AuditEntry {
  /** When it happened, ISO 8601 (UTC). */
  time: string;
  /** The caller's tenant; "" when no tenant was established (a refused token). */
  tenant: string;
  /** The caller's user id; "" when none was established. */
  user: string;
  /** The caller's role; "" when no identity was established. */
  role: Identity["role"] | "";
  /** `POST`, `PUT`, `DELETE`, `GET`; `PLAN` for the end of a plan. */
  method: string;
  /** The route template (`/clusters/:id`), never the path with its values; the token server's paths as they are. */
  route: string;
  /**
   * The endpoint (`clusters.create`, `auth.login`), or `other` for a path of no endpoint; for the end of a plan
   * `plan.succeeded` or `plan.failed`.
   */
  action: string;
  /** The entity or cluster the request is about ("" when none). */
  target: string;
  /** The answered status (499: the client went away first); for a plan, 200 when it succeeded, 500 when it failed. */
  status: number;
  /** The request's id (`X-Request-ID`), or the plan's id. */
  requestId: string;
  /** The client's address ("" for a plan). */
  source: string;
  /** For the end of a plan: the operation it carried out, as plans name it (`CLUSTER_CREATE`). */
  operation?: string;
  /** For a failed plan: the task that failed (`<taskName> <service> on <nodeId>`; no service for a node task). */
  failedTask?: string;
}

/**
 * A message of the audit stream holding several entries of one tenant (its subject's), oldest first: what the
 * processes that record requests publish, one per tenant and flush. `batch` is the form's version; a reader
 * skips a message of a version it does not know. `AuditLog.recordOnce` publishes a single {@link AuditEntry}
 * instead, so that its message id names that entry alone: a message holds either.
 */
export interface AuditBatch {
  batch: typeof AUDIT_BATCH_VERSION;
  entries: AuditEntry[];
}

export const AUDIT_BATCH_VERSION = 1;

/** What one message of the audit stream holds: a single entry or a batch. */
export type AuditMessage = AuditEntry | AuditBatch;

/** The entries a decoded audit stream message holds, oldest first; none when it is neither form. */
export function entriesOfAuditMessage(message: unknown): AuditEntry[] {
  if (typeof message !== "object" || message === null) return [];
  if ("batch" in message) {
    const { batch, entries } = message as Partial<AuditBatch>;
    return batch === AUDIT_BATCH_VERSION && Array.isArray(entries) ? entries : [];
  }
  return typeof (message as Partial<AuditEntry>).time === "string" ? [message as AuditEntry] : [];
}

/**
 * Where an entry is in the log: its message's stream sequence and its place in that message. An entry's `id`
 * (`GET /audit`) is `<seq>.<index>`; a plain `<seq>` (the ids before batches) reads as `<seq>.0`.
 */
export interface AuditPosition {
  seq: number;
  index: number;
}

export const auditIdOf = (position: AuditPosition): string => `${position.seq}.${position.index}`;

/** The position an id names; undefined when `id` is no id. */
export function auditPositionOf(id: string): AuditPosition | undefined {
  const match = /^([1-9][0-9]{0,15})(?:\.(0|[1-9][0-9]{0,8}))?$/.exec(id);
  if (!match) return undefined;
  const seq = Number(match[1]);
  if (!Number.isSafeInteger(seq)) return undefined;
  return { seq, index: match[2] === undefined ? 0 : Number(match[2]) };
}

/** Log order of two positions: negative when `a` was recorded before `b`. */
export const compareAuditPositions = (a: AuditPosition, b: AuditPosition): number => a.seq - b.seq || a.index - b.index;

/** Log order of two entries' ids (an id that is none sorts first). */
export function compareAuditIds(a: string, b: string): number {
  const none = { seq: 0, index: 0 };
  return compareAuditPositions(auditPositionOf(a) ?? none, auditPositionOf(b) ?? none);
}

/** The id latest in the log among `entries` and `from` (`""`, which sorts first, by default). */
export function latestAuditId(entries: ReadonlyArray<{ id: string } | undefined>, from = ""): string {
  return entries.reduce((latest, e) => (e && compareAuditIds(e.id, latest) > 0 ? e.id : latest), from);
}

/**
 * An entry as `GET /audit` answers it: with its position in the log (`<seq>.<index>`, {@link AuditPosition}),
 * which `after` takes to page on.
 */
export interface ListedAuditEntry extends AuditEntry {
  id: string;
}

/** What `GET /audit` answers: entries newest first; `next`, when more are older, is the `after` of the next page. */
export interface AuditPage {
  entries: ListedAuditEntry[];
  next?: string;
}
