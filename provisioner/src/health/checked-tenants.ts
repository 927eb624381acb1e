import type { WorkerAssignment } from "@corral/contracts";

/**
 * The tenants provisioner `id` checks: those it runs workers for where it has the lowest id among the
 * provisioners running the tenant's workers, so that one provisioner checks each tenant (two at most for a moment
 * while an assignment changes).
 */
export function checkedTenants(assignment: WorkerAssignment, id: string): Set<string> {
  const lowest = new Map<string, string>();
  for (const [provisioner, tenants] of Object.entries(assignment)) {
    if (typeof tenants !== "object" || tenants === null) continue;
    for (const [tenant, workers] of Object.entries(tenants)) {
      if (!(typeof workers === "number" && workers >= 1)) continue;
      const current = lowest.get(tenant);
      if (current === undefined || provisioner < current) lowest.set(tenant, provisioner);
    }
  }
  return new Set([...lowest].filter(([, provisioner]) => provisioner === id).map(([tenant]) => tenant));
}
