/** Tenants (docs/api.md, Endpoints: `/tenants`): the tenant object and the `{tenant, bootstrap}` write wrapper. */
import type { Tenant } from "../entities.js";
import {
  child,
  fail,
  getOwn,
  isObject,
  optionalInteger,
  optionalString,
  parseBoolean,
  parseInteger,
  parseJsonValue,
  parseName,
  requireObject,
  setOwn,
} from "./primitives.js";

/** The body of `POST /tenants` and `PUT /tenants/{id}`, validated. */
export interface TenantWrite {
  tenant: Tenant;
  /** Copy the superadmin catalog into the new tenant. @default false */
  bootstrap: boolean;
}

const KNOWN_TENANT_KEYS: ReadonlySet<string> = new Set(["name", "workers", "description", "maxClusters", "maxNodes"]);

/**
 * Validates a tenant object: `name` (NAME rule), `workers` (integer >= 0), optional `description`,
 * `maxClusters` and `maxNodes` (integers >= 0; absent or `null` means unlimited). Every other key is an
 * extra tenant setting, kept as given (any JSON value).
 * @throws BadRequestError naming the offending field.
 */
export function parseTenant(body: unknown): Tenant {
  return readTenant(body, "");
}

/**
 * Validates the tenant write wrapper `{tenant: {...}, bootstrap?: boolean}`; `bootstrap` also accepts
 * `"true"` / `"false"`. Error paths inside the tenant start with `tenant.`.
 * @throws BadRequestError naming the offending field.
 */
export function parseTenantWrite(body: unknown): TenantWrite {
  const obj = requireObject(body, "");
  const raw = getOwn(obj, "tenant");
  if (!isObject(raw)) fail("tenant", "must be an object");
  return { tenant: readTenant(raw, "tenant"), bootstrap: parseBoolean(getOwn(obj, "bootstrap"), "bootstrap", false) };
}

function readTenant(value: unknown, path: string): Tenant {
  const obj = requireObject(value, path);
  const tenant: Tenant = {
    name: parseName(getOwn(obj, "name"), child(path, "name")),
    workers: parseInteger(getOwn(obj, "workers"), child(path, "workers")),
  };
  const description = optionalString(getOwn(obj, "description"), child(path, "description"));
  if (description !== undefined) tenant.description = description;
  const maxClusters = optionalInteger(getOwn(obj, "maxClusters"), child(path, "maxClusters"));
  if (maxClusters !== undefined) tenant.maxClusters = maxClusters;
  const maxNodes = optionalInteger(getOwn(obj, "maxNodes"), child(path, "maxNodes"));
  if (maxNodes !== undefined) tenant.maxNodes = maxNodes;
  for (const [key, v] of Object.entries(obj)) {
    if (!KNOWN_TENANT_KEYS.has(key) && v !== undefined) setOwn(tenant, key, parseJsonValue(v, child(path, key)));
  }
  return tenant;
}
