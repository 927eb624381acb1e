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

/** An entry as `GET /audit` answers it: with its position in the log, which `after` takes to page on. */
export interface ListedAuditEntry extends AuditEntry {
  id: string;
}

/** What `GET /audit` answers: entries newest first; `next`, when more are older, is the `after` of the next page. */
export interface AuditPage {
  entries: ListedAuditEntry[];
  next?: string;
}
