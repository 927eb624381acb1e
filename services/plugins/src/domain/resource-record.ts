import { PluginKind, type ResourceMeta, type ResourceFormat } from "@corral/contracts";
import { isDeletable, type ResourceStatus } from "./version-status.js";

/** The two plugin kinds, as they appear in paths. */
export { PluginKind };
export const PLUGIN_KINDS: readonly PluginKind[] = Object.values(PluginKind);

/** Where a resource lives: one tenant's resource of one resource type of one plugin. */
export interface ResourceAddress {
  tenant: string;
  kind: PluginKind;
  plugin: string;
  resourceType: string;
  resource: string;
}

/** One stored version: its status and where its bytes are. */
export interface StoredVersion {
  version: number;
  status: ResourceStatus;
  /** Object name in the plugin resources object store. */
  object: string;
  /** Bytes. */
  size: number;
  /** The resource type's format when it was uploaded (an archive was checked as one). */
  format: ResourceFormat;
  /** ms */
  uploadedAt: number;
}

/**
 * What the metadata bucket holds per resource. `nextVersion` only grows, and the record stays (with no versions)
 * after every version was deleted, so a version number is never handed out twice for a name.
 */
export interface ResourceRecord {
  nextVersion: number;
  versions: StoredVersion[];
}

export type { ResourceMeta };

/** Adds a new version as `inactive` (an upload); returns the new record and the version number. */
export function withNewVersion(
  record: ResourceRecord | undefined,
  bytes: { object: string; size: number; format: ResourceFormat; uploadedAt: number },
): { record: ResourceRecord; version: number } {
  const version = Math.max(record?.nextVersion ?? 1, ...(record?.versions ?? []).map((v) => v.version + 1));
  const added: StoredVersion = { version, status: "inactive", ...bytes };
  return { record: { nextVersion: version + 1, versions: [...(record?.versions ?? []), added] }, version };
}

/** The API's metadata of a resource's versions, ascending, optionally only those with one status. */
export function metadataOf(name: string, record: ResourceRecord, status?: ResourceStatus): ResourceMeta[] {
  return [...record.versions]
    .sort((a, b) => a.version - b.version)
    .filter((v) => status === undefined || v.status === status)
    .map((v) => ({ name, version: v.version, status: v.status }));
}

export type RemovalResult =
  | { ok: true; record: ResourceRecord; removed: StoredVersion[] }
  | { ok: false; reason: "unknown_version" | "no_versions" }
  | { ok: false; reason: "not_inactive"; versions: Array<{ version: number; status: ResourceStatus }> };

/** Removes one version or all; every targeted version must be inactive. The counter is kept. */
export function withoutVersions(record: ResourceRecord, which: number | "all"): RemovalResult {
  const targeted = which === "all" ? record.versions : record.versions.filter((v) => v.version === which);
  if (targeted.length === 0) return { ok: false, reason: which === "all" ? "no_versions" : "unknown_version" };
  const blocking = targeted.filter((v) => !isDeletable(v.status));
  if (blocking.length > 0) {
    return { ok: false, reason: "not_inactive", versions: blocking.map((v) => ({ version: v.version, status: v.status })) };
  }
  const removed = new Set(targeted.map((v) => v.version));
  return {
    ok: true,
    record: { nextVersion: record.nextVersion, versions: record.versions.filter((v) => !removed.has(v.version)) },
    removed: targeted,
  };
}
