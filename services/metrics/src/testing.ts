/**
 * `@corral/metrics/testing`: for tests and benchmarks only, never for other services (they use the service's
 * requests). The node-event decoder, the usage access rule, the Redis usage store and the audit entries of plans'
 * ends and the audit log's reader, run without the service.
 */
export { parseNodeEvents } from "./domain/node-events.js";
export type { NodeEvent, ParsedNodeEvents } from "./domain/node-events.js";
export { resolveUsageQuery } from "./domain/usage-query.js";
export type { UsageScope } from "./domain/usage-query.js";
export { createRedisUsageStore } from "./adapters/usage-store.js";
export type { RedisClient, UsageStore } from "./adapters/usage-store.js";
export { planEndEntry, planEndMessageId, planEndsIn } from "./domain/plan-ends.js";
export { failedTaskLookup } from "./adapters/failed-task-lookup.js";
export { auditReader, AUDIT_SCAN_BUDGET } from "./adapters/audit-reader.js";
export { auditScopeOf, resolveAuditQuery } from "./domain/audit-query.js";
