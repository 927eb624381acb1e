import { isTerminatedCluster, type ClusterRecordHead } from "@corral/contracts";

/**
 * Why what a provisioner keeps for a cluster of `tenant` (containers, node directories) is left over: no record
 * (the tenant was deleted and purged), a record of another tenant, or a terminated cluster; undefined while the
 * cluster lives.
 */
export function orphanReason(record: ClusterRecordHead | undefined, tenant: string): string | undefined {
  if (!record) return "its cluster is not stored";
  if (record.tenant !== tenant) return `its cluster belongs to tenant ${record.tenant}`;
  if (isTerminatedCluster(record)) return "its cluster is terminated";
  return undefined;
}
