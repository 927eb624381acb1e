import type { EndpointHandlers } from "@corral/shared";
import type { AuditReader } from "../adapters/audit-reader.js";
import { auditScopeOf, resolveAuditQuery } from "../domain/audit-query.js";

/** `GET /audit`: a page of the audit log the caller may read (the gateway refused ordinary users already). */
export function auditHandlers(reader: AuditReader) {
  return {
    "metrics.audit": async (request) => reader.page(auditScopeOf(request.identity), resolveAuditQuery(request.query ?? {})),
  } satisfies EndpointHandlers<"metrics">;
}
