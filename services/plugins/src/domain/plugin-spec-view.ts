import type { PluginSpec, PluginSpecView } from "@corral/contracts";

/**
 * Maps a stored specification (`resourceTypes` / `format`, as provisioners announce it) to the form the API shows
 * (`resourcetypes` / `filetype`).
 */
export function toSpecView(spec: PluginSpec): PluginSpecView {
  const resourcetypes: PluginSpecView["resourcetypes"] = {};
  for (const [name, type] of Object.entries(spec.resourceTypes ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    resourcetypes[name] = { filetype: type.format };
  }
  return {
    name: spec.name,
    description: spec.description ?? "",
    resourcetypes,
    parameters: spec.parameters ?? {},
  };
}
