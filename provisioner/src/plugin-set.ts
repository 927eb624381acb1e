import type { AutomatorPlugin, Plugin, ProviderPlugin } from "./plugins/types.js";

/** The plugins of one provisioner, by kind and name. */
export interface PluginSet {
  providers: ReadonlyMap<string, ProviderPlugin>;
  automators: ReadonlyMap<string, AutomatorPlugin>;
  /** Names by kind, sorted, as written on the provisioner record. */
  names: { providertypes: string[]; automatortypes: string[] };
}

/** Indexes plugins by name; a name given twice for one kind is an error (it would be ambiguous). */
export function createPluginSet(plugins: readonly Plugin[]): PluginSet {
  const providers = new Map<string, ProviderPlugin>();
  const automators = new Map<string, AutomatorPlugin>();
  for (const plugin of plugins) {
    const name = plugin.spec?.name;
    if (typeof name !== "string" || name === "") throw new TypeError("plugins: a plugin has no spec.name");
    const byName: Map<string, Plugin> = plugin.kind === "providertypes" ? providers : automators;
    if (plugin.kind !== "providertypes" && plugin.kind !== "automatortypes") {
      throw new TypeError(`plugins: ${name} has kind ${String((plugin as { kind: unknown }).kind)}`);
    }
    if (byName.has(name)) throw new TypeError(`plugins: ${plugin.kind} ${name} is given twice`);
    byName.set(name, plugin);
  }
  return {
    providers,
    automators,
    names: { providertypes: [...providers.keys()].sort(), automatortypes: [...automators.keys()].sort() },
  };
}
