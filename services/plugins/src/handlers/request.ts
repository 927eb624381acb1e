import { BadRequestError, parseName, type ApiRequest, type PluginSpec, type QueryValues } from "@corral/contracts";
import { PLUGIN_KINDS, type PluginKind, type ResourceAddress } from "../domain/resource-record.js";
import { isResourceStatus, type ResourceStatus } from "../domain/version-status.js";
import type { PluginTypeReader as PluginTypeStore, ResourceFormat } from "@corral/shared";

/** Path segment `{plugin-type}`: `automatortypes` or `providertypes`, else 400. */
export function parseKind(value: unknown): PluginKind {
  if (typeof value === "string" && (PLUGIN_KINDS as readonly string[]).includes(value)) return value as PluginKind;
  throw new BadRequestError(`unknown plugin type ${JSON.stringify(value)}; use automatortypes or providertypes`, {
    field: "type",
  });
}

export const kindLabel = (kind: PluginKind) => (kind === "automatortypes" ? "automator" : "provider");

/** A resource type of a known plugin, with its declaration. */
export interface ResolvedType {
  tenant: string;
  kind: PluginKind;
  plugin: string;
  resourceType: string;
  spec: PluginSpec;
  format: ResourceFormat;
}

/**
 * Resolves `{plugin-type}/{plugin-name}/{resource-type}` of a request against the announced specifications.
 * Unknown plugin or a resource type the plugin does not define: 400.
 */
export async function resolveType(types: PluginTypeStore, req: ApiRequest): Promise<ResolvedType> {
  const kind = parseKind(req.params["type"]);
  const plugin = parseName(req.params["plugin"], "plugin");
  const resourceType = parseName(req.params["resourceType"], "resourceType");
  const spec = await types.get(kind, plugin);
  if (!spec) {
    throw new BadRequestError(`unknown ${kindLabel(kind)} plugin ${plugin}`, { field: "plugin" }, "unknown_plugin");
  }
  const declared = spec.resourceTypes && Object.hasOwn(spec.resourceTypes, resourceType) ? spec.resourceTypes[resourceType] : undefined;
  if (!declared) {
    const known = Object.keys(spec.resourceTypes ?? {}).sort();
    throw new BadRequestError(
      `${kindLabel(kind)} plugin ${plugin} has no resource type ${resourceType}` +
        (known.length ? ` (it has ${known.join(", ")})` : " (it defines none)"),
      { field: "resourceType" },
      "unknown_resource_type",
    );
  }
  return { tenant: req.identity.tenant, kind, plugin, resourceType, spec, format: declared.format };
}

/** A resource name: the NAME rule, and not `.` or `..` (they would name directories on provisioners). */
export function parseResourceName(value: unknown): string {
  const name = parseName(value, "resource");
  if (name === "." || name === "..") throw new BadRequestError(`resource name ${name} is reserved`, { field: "resource" });
  return name;
}

/** `{plugin-type}/{plugin-name}/{resource-type}/{resource-name}`: a resource of a known resource type. */
export async function resolveResource(
  types: PluginTypeStore,
  req: ApiRequest,
): Promise<ResolvedType & { address: ResourceAddress }> {
  const resolved = await resolveType(types, req);
  const resource = parseResourceName(req.params["resource"]);
  const { tenant, kind, plugin, resourceType } = resolved;
  return { ...resolved, address: { tenant, kind, plugin, resourceType, resource } };
}

/** `{version}`: a positive integer, else 400. */
export function parseVersion(value: unknown): number {
  const n = typeof value === "string" && /^[0-9]{1,15}$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new BadRequestError(`version must be a positive integer (got ${JSON.stringify(value)})`, { field: "version" });
  }
  return n;
}

/** Query `status`: one of active, inactive, staged, recalled (any case); absent means every status. */
export function parseStatusFilter(query: QueryValues<"status">): ResourceStatus | undefined {
  const raw = query["status"];
  if (raw === undefined) return undefined;
  const status = raw.trim().toLowerCase();
  if (!isResourceStatus(status)) {
    throw new BadRequestError(`status must be one of active, inactive, staged, recalled (got ${JSON.stringify(raw)})`, {
      field: "status",
    });
  }
  return status;
}
