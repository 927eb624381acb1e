import { PluginKind, type PluginSpec, type ValidationContext } from "@corral/contracts";
import type { RegistryStore } from "./adapters/registry-store.js";

/** The validation context, with the provider types' specifications (which fields are secret). */
export interface CatalogWriteContext extends ValidationContext {
  providerSpecs: ReadonlyMap<string, PluginSpec>;
}

/** Builds the validation context from the plugin types provisioners have announced, read fresh per write. */
export async function loadValidationContext(registry: RegistryStore): Promise<CatalogWriteContext> {
  const [providerTypes, automatorTypes] = await Promise.all([
    registry.pluginTypes(PluginKind.Provider),
    registry.pluginTypes(PluginKind.Automator),
  ]);
  return {
    isProviderType: (name: string) => providerTypes.has(name),
    automatorType: (name: string) => automatorTypes.get(name),
    providerSpecs: providerTypes,
  };
}
