import type { AuditEntry, Identity } from "@corral/contracts";
import type { AuditLog } from "@corral/shared";

/** What the gateway knows of a request once it is answered. */
export interface FinishedRequest {
  method: string;
  /** Route template (`/clusters/:id`), `unmatched` for a path of no route. */
  route: string;
  /** The endpoint of the route; none for a path of no route. */
  endpoint?: string;
  params: Readonly<Record<string, string>>;
  /** Who called, once established; absent when the request was refused before (a bad token, an unknown tenant). */
  identity?: Identity;
  /** An id the answer named (a created cluster's), for requests whose path names none. */
  answeredId?: string;
  status: number;
  requestId: string;
  source: string;
}

/** Which gateway requests go to the audit log, and how they are written there. */
export interface RequestAudit {
  /** Whether a request of `method` answered with `status` is recorded: every change, and every refusal. */
  wants(method: string, status: number): boolean;
  record(request: FinishedRequest): void;
}

const CHANGES = new Set(["POST", "PUT", "DELETE"]);
const REFUSALS = new Set([401, 403, 409]);
/** Path parameters that name what a request is about, in order of preference; otherwise the route's last one. */
const TARGET_PARAMS = ["id", "clusterId", "name"];

/** The entity or cluster a request is about: its path's, else the id its answer named. */
function targetOf(request: FinishedRequest): string {
  for (const name of TARGET_PARAMS) {
    const value = request.params[name];
    if (value !== undefined) return value;
  }
  const values = Object.values(request.params);
  return values[values.length - 1] ?? request.answeredId ?? "";
}

export function requestAudit(auditLog: AuditLog, now: () => number = Date.now): RequestAudit {
  return {
    wants: (method, status) => CHANGES.has(method) || REFUSALS.has(status),
    record(request) {
      const entry: AuditEntry = {
        time: new Date(now()).toISOString(),
        tenant: request.identity?.tenant ?? "",
        user: request.identity?.userId ?? "",
        role: request.identity?.role ?? "",
        method: request.method,
        route: request.route,
        action: request.endpoint ?? "other",
        target: targetOf(request),
        status: request.status,
        requestId: request.requestId,
        source: request.source,
      };
      auditLog.record(entry);
    },
  };
}

/** The id a JSON answer names at its top level (`clusterId`, `id`, `name`), if any. */
export function answeredIdOf(value: unknown): string | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  for (const key of ["clusterId", "id", "name"]) {
    const v = record[key];
    if (typeof v === "string") return v;
  }
  return undefined;
}
