/**
 * `@corral/tenancy/readers`: how other services read the tenants tenancy keeps, without opening its bucket
 * (tenancy alone writes it).
 */
export { openTenantReader } from "./tenant-reader.js";
export type { TenantReader } from "./tenant-reader.js";
export { openTenantCache } from "./tenant-cache.js";
export type { TenantCache } from "./tenant-cache.js";
