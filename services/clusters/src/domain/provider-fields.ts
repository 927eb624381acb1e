import type { Json, PluginField, PluginSpec } from "@corral/contracts";

/** One entry of the 400 `{missingFields}` body: field name -> its description. */
export type MissingFieldGroup = Record<string, { label: string; override: boolean; sensitive: boolean; tip: string; type: string }>;

const isGiven = (v: Json | undefined) => v !== undefined && v !== null && v !== "";

/**
 * Which required user fields of a provider type are missing (docs/architecture.md, Errors). `required` lists
 * alternative sets: the request is fine when any one set is fully given (by the provider's own settings or the
 * request's provider fields). Otherwise every set is reported with the fields it lacks. Empty when nothing is missing.
 */
export function missingProviderFields(spec: PluginSpec | undefined, given: Record<string, Json | undefined>): MissingFieldGroup[] {
  const user = spec?.parameters?.user;
  if (!user || user.required.length === 0) return [];
  const groups = user.required.map((set) => set.filter((name) => !isGiven(given[name])));
  if (groups.some((missing) => missing.length === 0)) return [];
  return groups.map((missing) =>
    Object.fromEntries(
      missing.map((name) => {
        const f: PluginField | undefined = user.fields[name];
        return [
          name,
          { label: f?.label ?? name, override: f?.override ?? false, sensitive: f?.sensitive ?? false, tip: f?.tip ?? "", type: f?.type ?? "text" },
        ];
      }),
    ),
  );
}

/**
 * The fields a user may give with a request (docs/security.md, Provider fields a user may give): the provider type's
 * user fields and its admin fields marked `override`. None when the type has no specification: then nothing says
 * which of the provider's fields are the user's, and any of them could be the endpoint or key the admin chose.
 */
export function userSettableFields(spec: PluginSpec | undefined): Set<string> {
  const settable = new Set<string>(Object.keys(spec?.parameters?.user?.fields ?? {}));
  for (const [name, field] of Object.entries(spec?.parameters?.admin?.fields ?? {})) {
    if (field.override === true) settable.add(name);
  }
  return settable;
}

/** The names among `given` that a user may not give (see {@link userSettableFields}), sorted; empty when all may be. */
export function fieldsNotSettableByUser(spec: PluginSpec | undefined, given: Record<string, Json | undefined>): string[] {
  const settable = userSettableFields(spec);
  return Object.keys(given)
    .filter((name) => !settable.has(name))
    .sort();
}
