import type { PluginSpec, ActiveSet } from "@corral/contracts";
import type { PluginKind, ResourceAddress, ResourceRecord } from "./resource-record.js";
import { isLive } from "./version-status.js";

export type { ActiveSet };

/**
 * Builds the active set from a tenant's resource records: every live version (active, or recalled and not yet
 * synced away). Sorted by plugin, resource type and name, so equal inputs give equal sets.
 */
export function buildActiveSet(
  tenant: string,
  records: ReadonlyArray<{ address: ResourceAddress; record: ResourceRecord }>,
  specOf: (kind: PluginKind, plugin: string) => PluginSpec | undefined,
  generation: number,
  publishedAt: number,
): ActiveSet {
  const set: ActiveSet = { tenant, generation, publishedAt, automatortypes: {}, providertypes: {} };
  const sorted = [...records].sort((a, b) => compareAddress(a.address, b.address));
  for (const { address, record } of sorted) {
    const live = record.versions.filter((v) => isLive(v.status)).sort((a, b) => a.version - b.version);
    if (live.length === 0) continue;
    const declared = specOf(address.kind, address.plugin)?.resourceTypes?.[address.resourceType];
    const plugins = set[address.kind];
    const types = (plugins[address.plugin] ??= {});
    let entry = types[address.resourceType];
    if (!entry) {
      entry = { format: declared?.format ?? live[0]?.format ?? "file", active: [] };
      if (entry.format === "file" && declared?.permissions) entry.permissions = declared.permissions;
      types[address.resourceType] = entry;
    }
    for (const v of live) {
      entry.active.push({ name: address.resource, version: v.version, object: v.object, size: v.size, format: v.format });
    }
  }
  return set;
}

function compareAddress(a: ResourceAddress, b: ResourceAddress): number {
  for (const k of ["kind", "plugin", "resourceType", "resource"] as const) {
    if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  }
  return 0;
}
