// The tenant readers moved to @corral/shared; exported here too until every importer switched.
export { openTenantReader, openTenantCache } from "@corral/shared";
export type { TenantReader, TenantCache } from "@corral/shared";
