import { BadRequestError, CorralError, type JsonObject, type Provider } from "@corral/contracts";
import type { TenancyClient } from "../adapters/tenancy-client.js";
import { fieldsNotSettableByUser, missingProviderFields, userSettableFields } from "../domain/provider-fields.js";

/**
 * The check of a request's provider fields, before anything of the request is stored: 400 `{missingFields}` when
 * the provider type's required user fields are not all given, else 400 `provider_field_not_allowed` when the
 * request gives a field a user may not set (docs/api.md, Provider fields of a request). Refused rather than
 * dropped: the request's fields are laid over the provider's in every task, so one the user may not set would
 * replace the admin's value (an endpoint, a region, a host-key setting), and dropping it silently would run the
 * job on settings the user did not ask for.
 */
export async function checkProviderFields(tenancy: TenancyClient, provider: Provider, fields: JsonObject): Promise<void> {
  const spec = await tenancy.providerType(provider.providertype);
  const missing = missingProviderFields(spec, { ...provider.provisioner, ...fields });
  if (missing.length > 0) {
    throw new CorralError(400, "missing_fields", `provider ${provider.name} needs more provider fields`, {
      missingFields: missing,
    });
  }
  const notAllowed = fieldsNotSettableByUser(spec, fields);
  if (notAllowed.length > 0) {
    const settable = [...userSettableFields(spec)].sort();
    const type = `provider type ${provider.providertype}`;
    const which = !spec
      ? `${type} is not announced by any provisioner, so a user may set none of its fields`
      : settable.length > 0
        ? `${type} lets a user set only ${settable.join(", ")}`
        : `${type} lets a user set none of its fields`;
    throw new BadRequestError(
      `providerFields ${notAllowed.join(", ")} may not be given with a request: ${which}`,
      { field: "providerFields", fields: notAllowed, allowedFields: settable },
      "provider_field_not_allowed",
    );
  }
}
