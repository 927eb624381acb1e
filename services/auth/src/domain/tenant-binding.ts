import type { TenantRecordHead } from "@corral/contracts";

/**
 * The tenant a token was issued for, when the login named one: its name and the uid its record had then. A
 * tenant deleted and created again under the same name gets another uid, so the token is refused there.
 */
export interface TenantBinding {
  name: string;
  /**
   * "" for a record written before tenants had uids (it is bound by name until the tenant is re-created). Absent for
   * an identity provider's token, whose tenant claim names a tenant, not one record of it: it acts in the tenant
   * of that name while there is one.
   */
  uid?: string;
}

/** The uid a token is compared with: a record without one counts as "". */
export function tenantUidOf(record: TenantRecordHead): string {
  return record.uid ?? "";
}

/**
 * Why a token bound to `binding` may not act in `tenant`, whose record now has `currentUid` (undefined: no
 * such tenant); undefined when it may.
 */
export function bindingProblem(binding: TenantBinding, tenant: string, currentUid: string | undefined): string | undefined {
  if (binding.name !== tenant) return `the token was issued for tenant ${binding.name}, not for Service-TenantID ${tenant}`;
  if (binding.uid === undefined) {
    return currentUid === undefined ? `tenant ${tenant}, named by the identity provider's tenant claim, does not exist` : undefined;
  }
  if (currentUid !== binding.uid) {
    return `the token was issued for a tenant that no longer exists (tenant ${tenant} was deleted since); log in again`;
  }
  return undefined;
}
