import {
  PluginKind,
  keepRedactedValues,
  redactProvider,
  seesSecrets,
  sensitiveFieldsOf,
  type Identity,
  type PluginSpec,
  type Provider,
} from "@corral/contracts";
import type { RegistryStore } from "./adapters/registry-store.js";

/** The announced provider types by name, read fresh per request. */
export type ProviderSpecs = ReadonlyMap<string, PluginSpec>;

export const loadProviderSpecs = (registry: RegistryStore): Promise<ProviderSpecs> => registry.pluginTypes(PluginKind.Provider);

/** Providers as the caller may see them: secret fields redacted for anyone but the tenant admin. */
export async function providersSeenBy(identity: Identity, providers: Provider[], registry: RegistryStore): Promise<Provider[]> {
  if (seesSecrets(identity)) return providers;
  const specs = await loadProviderSpecs(registry);
  return providers.map((p) => redactProvider(p, sensitiveFieldsOf(specs.get(p.providertype))));
}

/**
 * A provider about to be written, with secret fields that came back redacted given their stored values (`stored`:
 * the provider of that name as it is now, if any). `at` prefixes the field named by a 400.
 */
export function withStoredSecrets(provider: Provider, stored: Provider | undefined, specs: ProviderSpecs, at = ""): Provider {
  return keepRedactedValues(provider, stored, sensitiveFieldsOf(specs.get(provider.providertype)), at);
}
