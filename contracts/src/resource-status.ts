/** The status of a plugin resource version; services/plugins/src/domain/version-status.ts moves between them. */
export const ResourceStatus = {
  Inactive: "inactive",
  Staged: "staged",
  Active: "active",
  Recalled: "recalled",
} as const;
export type ResourceStatus = (typeof ResourceStatus)[keyof typeof ResourceStatus];
export const RESOURCE_STATUSES: readonly ResourceStatus[] = Object.values(ResourceStatus);
