/**
 * The form for provider fields a request is missing (a 4xx `{missingFields}`), generated from the provider type's
 * user parameters (`GET /v2/plugins/providertypes/{name}`). Sensitive fields are password inputs, never filled
 * from anything the server sent.
 */
import type { JsonObject, PluginField } from "@corral/contracts";
import type { Api } from "../api.js";
import { h } from "./dom.js";
import { field, type Field } from "./form.js";

export interface ProviderFieldsForm {
  element: HTMLElement;
  fields: Field[];
  values(): JsonObject;
}

const isSecret = (f: PluginField) => f.sensitive === true || f.type === "password";

export async function providerFieldsForm(api: Api, providerType: string, missing: readonly string[]): Promise<ProviderFieldsForm> {
  const spec = await api.call("plugins.getType", { params: { type: "providertypes", plugin: providerType } });
  const declared = spec.parameters.user?.fields ?? {};
  // Every field the server asks for, in the plugin's order, then any it asks for that the plugin does not declare.
  const names = [...Object.keys(declared).filter((n) => missing.includes(n)), ...missing.filter((n) => !(n in declared))];
  const fields = names.map((name) => {
    const spec = declared[name];
    return field({
      name,
      label: spec?.label ?? name,
      required: true,
      sensitive: spec ? isSecret(spec) : false,
      ...(spec?.options ? { type: "select" as const, choices: spec.options.map(String) } : {}),
      ...(spec?.tip ? { hint: spec.tip } : {}),
      ...(spec && !isSecret(spec) && spec.default !== undefined ? { value: String(spec.default) } : {}),
    });
  });
  const element = h(
    "fieldset",
    { class: "provider-fields" },
    h("legend", null, `Provider ${providerType} needs these fields`),
    ...fields.map((f) => f.element),
  );
  return { element, fields, values: () => Object.fromEntries(fields.map((f) => [f.name, f.value()])) };
}
