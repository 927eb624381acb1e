/** Providers (docs/catalog.md, The entities; docs/providers.md). */
import type { Provider } from "../entities.js";
import {
  child,
  fail,
  getOwn,
  isAbsent,
  optionalString,
  parseJsonObject,
  parseName,
  requireNonEmptyString,
  requireObject,
} from "./primitives.js";

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
  const obj = requireObject(body, "");
  const name = parseName(getOwn(obj, "name"), "name");
  const description = optionalString(getOwn(obj, "description"), "description");
  const providertype = requireNonEmptyString(getOwn(obj, "providertype"), "providertype");
  if (!ctx.isProviderType(providertype)) fail("providertype", `${providertype} is not a known provider plugin type`);
  const rawProvisioner = getOwn(obj, "provisioner");
  const provisioner = isAbsent(rawProvisioner) ? {} : parseJsonObject(rawProvisioner, "provisioner");
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
