/**
 * The life of a plugin resource version, as pure functions over a resource's versions (docs/decisions.md, Plugin
 * resource stage and recall never answer 409).
 *
 * Coopr keeps two flags per version: `slated` (wanted after the next sync) and `live` (in use by provisioners now). The
 * four statuses are their combinations: inactive (neither), staged (slated), active (slated and live), recalled (live
 * only). Staging a version slates it and un-slates every other version of the same resource, so at most one version is
 * slated and, after a sync, at most one is live.
 */

import { RESOURCE_STATUSES, ResourceStatus } from "@corral/contracts";

export { RESOURCE_STATUSES, ResourceStatus };

export function isResourceStatus(value: unknown): value is ResourceStatus {
  return typeof value === "string" && (RESOURCE_STATUSES as readonly string[]).includes(value);
}

/** What changes a resource's versions. */
export type VersionEvent =
  | { type: "version.stage"; version: number }
  | { type: "version.recall"; version: number }
  | { type: "resource.sync" };

/** The "stage" rows of the version status table, for the targeted version. */
export function statusAfterStage(status: ResourceStatus): ResourceStatus {
  switch (status) {
    case "inactive":
      return "staged";
    case "staged":
      return "staged"; // no effect
    case "active":
      return "active"; // no effect
    case "recalled":
      return "active";
  }
}

/** The "recall" rows of the version status table, for the targeted version. */
export function statusAfterRecall(status: ResourceStatus): ResourceStatus {
  switch (status) {
    case "active":
      return "recalled";
    case "staged":
      return "inactive";
    case "inactive":
      return "inactive"; // no effect
    case "recalled":
      return "recalled"; // no effect
  }
}

/**
 * The "sync" rows of the version status table: staged -> active; recalled is removed from use, after which it is
 * `inactive` (the spec does not say; Coopr's sync sets live := slated, which makes a recalled version inactive).
 */
export function statusAfterSync(status: ResourceStatus): ResourceStatus {
  switch (status) {
    case "staged":
      return "active";
    case "recalled":
      return "inactive";
    default:
      return status;
  }
}

/** What staging another version does to this one: it is no longer wanted (staged -> inactive, active -> recalled). */
function unslated(status: ResourceStatus): ResourceStatus {
  if (status === "staged") return "inactive";
  if (status === "active") return "recalled";
  return status;
}

/** The result of a transition: the next versions, or why there is none. */
export type TransitionResult<T> = { ok: true; versions: T[]; changed: boolean } | { ok: false; reason: "unknown_version" };

/**
 * Applies one event to a resource's versions. Pure: returns new objects, never mutates `versions`.
 * Stage and recall of an unknown version fail with `unknown_version`; no other event fails.
 */
export function transition<T extends { version: number; status: ResourceStatus }>(
  versions: readonly T[],
  event: VersionEvent,
): TransitionResult<T> {
  let next: T[];
  if (event.type === "resource.sync") {
    next = versions.map((v) => ({ ...v, status: statusAfterSync(v.status) }));
  } else {
    if (!versions.some((v) => v.version === event.version)) return { ok: false, reason: "unknown_version" };
    next = versions.map((v) => {
      if (v.version !== event.version) return event.type === "version.stage" ? { ...v, status: unslated(v.status) } : { ...v };
      const status = event.type === "version.stage" ? statusAfterStage(v.status) : statusAfterRecall(v.status);
      return { ...v, status };
    });
  }
  const changed = next.some((v, i) => v.status !== versions[i]?.status);
  return { ok: true, versions: next, changed };
}

/** Live versions are the ones provisioners use now: active, and recalled until the next sync. */
export function isLive(status: ResourceStatus): boolean {
  return status === "active" || status === "recalled";
}

/** Only inactive versions may be deleted. */
export function isDeletable(status: ResourceStatus): boolean {
  return status === "inactive";
}
