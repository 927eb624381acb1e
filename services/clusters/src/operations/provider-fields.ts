import { CorralError, type JsonObject, type Provider } from "@corral/contracts";
import type { TenancyClient } from "../adapters/tenancy-client.js";
import { missingProviderFields } from "../domain/provider-fields.js";

/** Answers 400 `{missingFields}` when the provider type's required user fields are not all given. */
export async function requireProviderFields(tenancy: TenancyClient, provider: Provider, fields: JsonObject): Promise<void> {
  const spec = await tenancy.providerType(provider.providertype);
  const missing = missingProviderFields(spec, { ...provider.provisioner, ...fields });
  if (missing.length > 0) {
    throw new CorralError(400, "missing_fields", `provider ${provider.name} needs more provider fields`, {
      missingFields: missing,
    });
  }
}
