import { SUPERADMIN_TENANT, type Identity } from "@corral/contracts";

/**
 * How token roles become Corral's roles when security is on (they replace the "user `admin` is the admin"
 * convention of the identity headers). Role names are compared case-insensitively.
 *
 * | token role        | acting in tenant `superadmin` | acting in any other tenant |
 * |-------------------|-------------------------------|----------------------------|
 * | `superadmin`      | superadmin                    | tenant admin               |
 * | `admin`           | tenant admin (not superadmin) | tenant admin               |
 * | `admin:<tenant>`  | superadmin if `<tenant>` is `superadmin` | tenant admin of `<tenant>` only |
 * | anything else     | user                          | user                       |
 *
 * Tokens carry no tenant (realm files and LDAP know users, not tenants), so an unscoped `admin` administers
 * every tenant it names; use `admin:<tenant>` to limit an administrator to one tenant.
 */
export function roleFromToken(roles: readonly string[], tenant: string): Identity["role"] {
  const names = new Set(roles.map((r) => r.trim().toLowerCase()));
  const scoped = names.has(`admin:${tenant.toLowerCase()}`);
  if (tenant === SUPERADMIN_TENANT) {
    if (names.has("superadmin") || scoped) return "superadmin";
    return names.has("admin") ? "admin" : "user";
  }
  if (names.has("superadmin") || names.has("admin") || scoped) return "admin";
  return "user";
}

/** Whether the roles make their bearer the superadmin (who may revoke anyone's tokens). */
export function isSuperadmin(roles: readonly string[]): boolean {
  return roleFromToken(roles, SUPERADMIN_TENANT) === "superadmin";
}
