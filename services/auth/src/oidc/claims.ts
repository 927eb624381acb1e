import { SUPERADMIN_TENANT, isValidName } from "@corral/contracts";
import type { ClaimMapping } from "./settings.js";

/** Who an identity provider's token says its bearer is, in Corral's terms. */
export interface ProviderIdentity {
  userId: string;
  tenant: string;
  /** Corral token roles: `[]`, `["admin"]` or `["superadmin"]`; never a value of the provider's claim itself. */
  roles: string[];
}

export type ClaimsReading = { ok: true; identity: ProviderIdentity } | { ok: false; reason: string };

/** Longest user id accepted, as for `Service-UserID`. */
const MAX_USER_LENGTH = 255;

/**
 * A claim by name; a name that is not a claim itself but has dots walks into objects (`realm_access.roles`).
 * Claim names may contain dots themselves (`https://example.com/tenant`), so the whole name is tried first.
 */
export function claimAt(claims: Readonly<Record<string, unknown>>, name: string): unknown {
  if (Object.hasOwn(claims, name)) return claims[name];
  let value: unknown = claims;
  for (const part of name.split(".")) {
    if (!value || typeof value !== "object" || Array.isArray(value) || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function rolesIn(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  return [];
}

/**
 * Maps verified claims to an identity (docs/security.md, Single sign-on): the user from `userClaim`, the tenant from
 * `tenantClaim` (else `defaultTenant`), the role from `roleClaim`. Only the configured admin and superadmin values
 * give rights, so no group name at the provider can grant the superadmin by accident; the superadmin value counts
 * only for a user of tenant `superadmin`.
 */
export function identityFromClaims(claims: Readonly<Record<string, unknown>>, mapping: ClaimMapping): ClaimsReading {
  const user = claimAt(claims, mapping.userClaim);
  if (typeof user !== "string" || !user.trim()) return { ok: false, reason: `the token has no ${mapping.userClaim} claim naming the user` };
  if (user.length > MAX_USER_LENGTH) return { ok: false, reason: `the ${mapping.userClaim} claim is longer than ${MAX_USER_LENGTH} characters` };
  const claimed = mapping.tenantClaim ? claimAt(claims, mapping.tenantClaim) : undefined;
  if (claimed !== undefined && typeof claimed !== "string") return { ok: false, reason: `the ${mapping.tenantClaim} claim is not a tenant name` };
  const tenant = claimed || mapping.defaultTenant;
  if (!tenant) return { ok: false, reason: `the token has no ${mapping.tenantClaim} claim naming the tenant, and no default tenant is configured` };
  if (!isValidName(tenant)) return { ok: false, reason: `the tenant ${JSON.stringify(String(tenant).slice(0, 80))} is not a valid tenant name` };
  const held = new Set(mapping.roleClaim ? rolesIn(claimAt(claims, mapping.roleClaim)) : []);
  const roles =
    mapping.superadminRole && held.has(mapping.superadminRole) && tenant === SUPERADMIN_TENANT
      ? ["superadmin"]
      : mapping.adminRole && held.has(mapping.adminRole)
        ? ["admin"]
        : [];
  return { ok: true, identity: { userId: user, tenant, roles } };
}
