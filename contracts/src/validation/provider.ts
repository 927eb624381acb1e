/** Providers (docs/catalog.md, The entities; docs/providers.md). */
import { providerWriteSchema } from "../endpoints/entity-schemas.js";
import type { Provider } from "../entities.js";
import { bodyValidator } from "./check.js";
import { fail, getOwn, isAbsent, requireObject } from "./primitives.js";

const validate = bodyValidator(providerWriteSchema);

/** What provider validation needs to know about the tenant's plugins. */
export interface ProviderValidationContext {
  /** True when `name` is a provider plugin type known to the tenant. */
  isProviderType(name: string): boolean;
}

/**
 * Validates a provider: `name` (NAME rule), optional `description`, `providertype` (a known provider plugin
 * type) and optional `provisioner` settings (a JSON object of any values, `{}` when absent).
 * @throws BadRequestError naming the offending field.
 */
export function parseProvider(body: unknown, ctx: ProviderValidationContext): Provider {
  const { name, description, providertype, provisioner = {} } = validate(body);
  if (!ctx.isProviderType(providertype)) fail("providertype", `${providertype} is not a known provider plugin type`);
  return { name, ...(description === undefined ? {} : { description }), providertype, provisioner };
}

const KEPT_ON_UPDATE = ["description", "providertype", "provisioner"] as const;

/**
 * PUT semantics for providers: `description`, `providertype` and `provisioner` that are absent (or `null`)
 * in `body` keep their values from `old`. Returns a new, still unvalidated body for {@link parseProvider}.
 * @throws BadRequestError when `body` is not a JSON object.
 */
export function mergeProviderUpdate(old: Provider, body: unknown): unknown {
  const merged: Record<string, unknown> = { ...requireObject(body, "") };
  for (const key of KEPT_ON_UPDATE) {
    if (isAbsent(getOwn(merged, key)) && old[key] !== undefined) merged[key] = old[key];
  }
  return merged;
}
