/**
 * Secret provider fields: those a provider type's specification marks `sensitive` or of type `password`. Only the
 * tenant admin sees their values; everyone else gets {@link REDACTED} in their place (providers, export, cluster
 * details) or where they occur in task output.
 */
import type { Json, JsonObject, PluginSpec, Provider } from "./entities.js";
import { BadRequestError } from "./errors.js";
import type { Identity } from "./api-request.js";

/** What replaces a secret value for those who may not see it. Given back in a write, it means "unchanged". */
export const REDACTED = "********";

/** Which fields of a provider type are secret. */
export interface SensitiveFields {
  has(field: string): boolean;
}

const EVERY_FIELD: SensitiveFields = { has: () => true };

/**
 * The secret fields of a provider type (admin and user parameters alike). A type no provisioner announces (any
 * more) tells nothing about its fields: then every field counts as secret.
 */
export function sensitiveFieldsOf(spec: PluginSpec | undefined): SensitiveFields {
  if (!spec) return EVERY_FIELD;
  const names = new Set<string>();
  for (const set of [spec.parameters?.admin, spec.parameters?.user]) {
    for (const [name, field] of Object.entries(set?.fields ?? {})) {
      if (field.sensitive === true || field.type === "password") names.add(name);
    }
  }
  return names;
}

/** The tenant admin (and the superadmin, in its own tenant) sees secret values; ordinary users do not. */
export const seesSecrets = (identity: Identity): boolean => identity.role !== "user";

const hasValue = (v: Json | undefined): boolean => v !== undefined && v !== null && v !== "";

/** The provider with every secret field that has a value shown as {@link REDACTED}. */
export function redactProvider(provider: Provider, sensitive: SensitiveFields): Provider {
  const entries = Object.entries(provider.provisioner);
  if (!entries.some(([name, value]) => sensitive.has(name) && hasValue(value))) return provider;
  const provisioner: JsonObject = Object.fromEntries(
    entries.map(([name, value]) => [name, sensitive.has(name) && hasValue(value) ? REDACTED : value]),
  );
  return { ...provider, provisioner };
}

/** The text forms a secret field's value can take in output: as given and as written inside a JSON string. */
export function secretValues(fields: JsonObject, sensitive: SensitiveFields): string[] {
  const out = new Set<string>();
  for (const [name, value] of Object.entries(fields)) {
    if (!sensitive.has(name) || (typeof value !== "string" && typeof value !== "number") || value === "") continue;
    const text = String(value);
    out.add(text);
    out.add(JSON.stringify(text).slice(1, -1));
  }
  // Longest first, so a secret containing another is replaced whole.
  return [...out].sort((a, b) => b.length - a.length);
}

/** `text` with every occurrence of every secret replaced by {@link REDACTED}. */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}

/**
 * A provider about to be written, with every secret field whose value is {@link REDACTED} (it came back from a
 * redacted read) given its value from `stored`, the provider as it is now. The marker is never stored.
 * @throws BadRequestError naming the field when there is no stored value to keep.
 */
export function keepRedactedValues(provider: Provider, stored: Provider | undefined, sensitive: SensitiveFields, at = ""): Provider {
  const entries = Object.entries(provider.provisioner);
  if (!entries.some(([name, value]) => value === REDACTED && sensitive.has(name))) return provider;
  const provisioner: JsonObject = {};
  for (const [name, value] of entries) {
    if (value !== REDACTED || !sensitive.has(name)) {
      provisioner[name] = value;
      continue;
    }
    const kept = stored?.provisioner[name];
    if (!hasValue(kept)) {
      const field = `${at}provisioner.${name}`;
      throw new BadRequestError(
        `${field} is "${REDACTED}", which stands for a hidden value, and provider ${provider.name} has no stored value to keep: give the value`,
        { field },
      );
    }
    provisioner[name] = kept as Json;
  }
  return { ...provider, provisioner };
}
