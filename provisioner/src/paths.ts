import { join } from "node:path";
import { keyToken } from "@corral/shared";

/**
 * Where a provisioner keeps files under its work directory:
 *
 * ```
 * <workDir>/<tenant>/nodes/<clusterId>/<nodeId>/            per-node working directory of automator actions
 * <workDir>/<tenant>/tmp/                                     /tmp and /var/tmp of the tenant's local actions
 * <workDir>/<tenant>/<automatortypes|providertypes>/<plugin>/<resource type>/   synced plugin resources
 * ```
 *
 * Every name becomes one path segment: names that are plain (`[A-Za-z0-9_-][-_.A-Za-z0-9]*`) are kept, anything
 * else (a `/`, a leading `.`, `..`) is escaped with `keyToken`, so no name can leave its directory.
 */
export function pathSegment(name: string): string {
  return /^[A-Za-z0-9_-][-_.A-Za-z0-9]*$/.test(name) ? name : keyToken(name);
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
