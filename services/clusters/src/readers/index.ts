/**
 * `@corral/clusters/readers`: how other services read what the clusters service keeps, without opening its
 * buckets (it alone writes them).
 */
export { openUsageReader } from "./usage-reader.js";
export type { UsageReader } from "./usage-reader.js";
export type { TenantUsage } from "../domain/quota.js";
