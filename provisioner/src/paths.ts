import { join } from "node:path";
import { fromKeyToken, keyToken } from "@corral/contracts";

/**
 * Where a provisioner keeps files under its work directory:
 *
 * ```
 * <workDir>/<tenant>/nodes/<clusterId>/<nodeId>/            per-node working directory of automator actions
 * <workDir>/<tenant>/tmp/                                     /tmp and /var/tmp of the tenant's local actions
 * <workDir>/<tenant>/<automatortypes|providertypes>/<plugin>/<resource type>/   synced plugin resources
 * ```
 *
 * Every name becomes one path segment: names that are plain (`[A-Za-z0-9-][-_.A-Za-z0-9]*`) are kept, anything
 * else (a `/`, a leading `.` or `_`, `..`) is escaped with `keyToken`, so no name can leave its directory. An escaped
 * NAME (`[A-Za-z0-9._-]+`: tenants, plugins) always starts with `_` and a kept one never does, so two names never
 * share a directory (`.x` and `_2Ex` did, with a leading `_` kept) and `nameOfSegment` reads it back.
 */
export function pathSegment(name: string): string {
  return /^[A-Za-z0-9-][-_.A-Za-z0-9]*$/.test(name) ? name : keyToken(name);
}

/** The name a segment made by `pathSegment` stands for (check with `pathSegment` that it does). */
export function nameOfSegment(segment: string): string {
  return segment.startsWith("_") ? fromKeyToken(segment) : segment;
}

/** `<workDir>/<tenant>` */
export function tenantDir(workDir: string, tenant: string): string {
  return join(workDir, pathSegment(tenant));
}

/** `<workDir>/<tenant>/tmp`: the `/tmp` of the tenant's local actions. */
export function tenantTmpDir(workDir: string, tenant: string): string {
  return join(tenantDir(workDir, tenant), "tmp");
}

/** `<workDir>/<tenant>/nodes/<clusterId>/<nodeId>` */
export function nodeDir(workDir: string, tenant: string, clusterId: string, nodeId: string): string {
  return join(tenantDir(workDir, tenant), "nodes", pathSegment(clusterId), pathSegment(nodeId));
}

/** `<workDir>/<tenant>/<kind>/<plugin>/<resourceType>`: where synced resources of one type are activated. */
export function resourceDir(
  workDir: string,
  tenant: string,
  kind: "automatortypes" | "providertypes",
  plugin: string,
  resourceType: string,
): string {
  return join(tenantDir(workDir, tenant), kind, pathSegment(plugin), pathSegment(resourceType));
}
