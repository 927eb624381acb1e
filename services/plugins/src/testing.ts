/**
 * `@corral/plugins/testing`: for tests only, never for other services (they use the service's requests or
 * shared's active-set reader). The pure rules of resource records and versions, the archive check, and the
 * resource store and tenant janitor run without the service.
 */
export { metadataOf, withNewVersion, withoutVersions } from "./domain/resource-record.js";
export type { ResourceRecord, StoredVersion } from "./domain/resource-record.js";
export { buildActiveSet } from "./domain/active-set.js";
export { toSpecView } from "./domain/plugin-spec-view.js";
export { isLive, transition } from "./domain/version-status.js";
export type { VersionEvent } from "./domain/version-status.js";
export { ArchiveLayoutError, createTarChecker } from "./domain/tar-check.js";
export { openResourceStore } from "./adapters/resource-store.js";
export { startTenantJanitor } from "./tenant-janitor.js";
