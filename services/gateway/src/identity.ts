import { ADMIN_USER, SUPERADMIN_TENANT, UnauthorizedError, isValidName, type Identity } from "@corral/contracts";

/** Longest user id accepted; ids end up in keys and subjects, which have length limits. */
const MAX_IDENTITY_LENGTH = 255;
import type { Access } from "./routes.js";
import type { TenantDirectory } from "./tenant-directory.js";

export const USER_HEADER = "service-userid";
export const TENANT_HEADER = "service-tenantid";
export const API_KEY_HEADER = "service-apikey";

/** The role a user has: `admin` administers its tenant; `admin` of `superadmin` administers everything. */
export function roleOf(userId: string, tenant: string): Identity["role"] {
  if (userId !== ADMIN_USER) return "user";
  return tenant === SUPERADMIN_TENANT ? "superadmin" : "admin";
}

/** Establishes who calls from the identity headers; 401 when absent or unknown. */
export async function resolveIdentity(
  userId: string,
  tenant: string,
  directory: TenantDirectory,
): Promise<Identity> {
  if (!userId) throw new UnauthorizedError("the Service-UserID header is required");
  if (!tenant) throw new UnauthorizedError("the Service-TenantID header is required");
  if (userId.length > MAX_IDENTITY_LENGTH) throw new UnauthorizedError("the Service-UserID header is too long");
  if (!isValidName(tenant)) throw new UnauthorizedError("the Service-TenantID header is not a valid tenant name");
  if (!(await directory.exists(tenant))) throw new UnauthorizedError(`tenant ${tenant} does not exist`);
  return { userId, tenant, role: roleOf(userId, tenant) };
}

/** Whether a role may use a route of the given access level. */
export function isAllowed(role: Identity["role"], access: Access): boolean {
  switch (access) {
    case "public":
    case "user":
      return true;
    case "admin":
      return role === "admin" || role === "superadmin";
    case "superadmin":
      return role === "superadmin";
  }
}
