/**
 * `@corral/clusters/readers`: how other services read what the clusters service keeps, without opening its
 * buckets (it alone writes them).
 */
export { openUsageReader } from "../adapters/usage-reader.js";
export type { UsageReader } from "../adapters/usage-reader.js";
export type { TenantUsage } from "../domain/quota.js";
