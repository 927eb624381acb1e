/** The audit log's endpoint: `GET /audit`, answered by the metrics service (docs/architecture.md, The audit log). */
import { Type } from "@sinclair/typebox";
import type { AuditPage } from "../audit.js";
import { endpointSubject } from "../subjects.js";
import { integerField } from "../validation/fields.js";
import { endpointsOf } from "./endpoint.js";
import { arrayOf, integer, objectOf, oneOfValues, string, typedSchema } from "./json-schema.js";

/** Entries one page holds at most, and by default. */
export const AUDIT_PAGE_MAX = 1000;
export const AUDIT_PAGE_DEFAULT = 100;

const define = endpointsOf("metrics");
const text = (description: string) => Type.Optional(Type.String({ description }));

const auditEntrySchema = objectOf(
  {
    id: Type.String({
      description: "The entry's position in the log, `<seq>.<index>`: the stream sequence of the message holding it and its place in that message.",
      pattern: "^[1-9][0-9]*\\.[0-9]+$",
    }),
    time: Type.String({ description: "ISO 8601, UTC." }),
    tenant: string,
    user: string,
    role: oneOfValues(["user", "admin", "superadmin", ""]),
    method: string,
    route: string,
    action: string,
    target: string,
    status: integer,
    requestId: string,
    source: string,
  },
  { optional: { operation: string, failedTask: string } },
);

export const auditEndpoints = {
  // A tenant admin reads its tenant's entries, the superadmin every tenant's; a user is refused (401).
  "metrics.audit": define.get(
    endpointSubject("metrics.audit"),
    "/audit",
    "admin",
    typedSchema<AuditPage>(
      objectOf(
        { entries: arrayOf(auditEntrySchema) },
        { optional: { next: Type.String({ description: "Given when older entries may match: the `after` of the next page (the last entry's id, or where the scan stopped)." }) } },
      ),
    ),
    {
      query: Type.Object({
        since: text("Only entries at or after this time (ISO 8601, or milliseconds since the epoch)."),
        until: text("Only entries at or before this time (ISO 8601, or milliseconds since the epoch)."),
        user: text("Only this user's entries."),
        action: text("Only this action: an endpoint name (`clusters.create`), or its prefix ending in a dot (`clusters.`)."),
        target: text("Only entries about this entity or cluster."),
        limit: Type.Optional(integerField({ minimum: 1, maximum: AUDIT_PAGE_MAX, description: `Entries per page (default ${AUDIT_PAGE_DEFAULT}).` })),
        after: text("The `next` of the previous page: only entries recorded before that position (`<seq>.<index>`; a plain `<seq>`, before that message)."),
      }),
      errors: { 400: "A time that is neither ISO 8601 nor milliseconds, or an `after` that is not a page's `next`." },
    },
  ),
};

