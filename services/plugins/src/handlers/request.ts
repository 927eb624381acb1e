import { BadRequestError, type PluginSpec, type ResourceFormat } from "@corral/contracts";
import type { PluginKind, ResourceAddress } from "../domain/resource-record.js";
import type { PluginTypeReader as PluginTypeStore } from "@corral/shared";

export const kindLabel = (kind: PluginKind) => (kind === "automatortypes" ? "automator" : "provider");

/** A request's `{plugin-type}/{plugin-name}/{resource-type}` (checked against the endpoint table's declaration). */
export interface TypePath {
  identity: { tenant: string };
  params: { type: PluginKind; plugin: string; resourceType: string };
}

/** And its `{resource-name}`. */
export interface ResourcePath extends TypePath {
  params: TypePath["params"] & { resource: string };
}

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
export async function resolveType(types: PluginTypeStore, req: TypePath): Promise<ResolvedType> {
  const { type: kind, plugin, resourceType } = req.params;
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

/** `{plugin-type}/{plugin-name}/{resource-type}/{resource-name}`: a resource of a known resource type. */
export async function resolveResource(types: PluginTypeStore, req: ResourcePath): Promise<ResolvedType & { address: ResourceAddress }> {
  const resolved = await resolveType(types, req);
  const { resource } = req.params;
  const { tenant, kind, plugin, resourceType } = resolved;
  return { ...resolved, address: { tenant, kind, plugin, resourceType, resource } };
}
