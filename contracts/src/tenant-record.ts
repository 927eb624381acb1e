import type { Tenant } from "./entities.js";

/**
 * A tenant being deleted: its record stays as this tombstone until every service has purged the tenant's state,
 * so the name cannot be created again before then. To everyone but tenancy's deletion it is a tenant that does
 * not exist.
 */
export interface TenantDeletion {
  /** ms */
  since: number;
  /**
   * False while the delete checks that no cluster is live (the tenant is restored when one is); true once it is
   * decided: from then on the tenant is purged, never restored.
   */
  committed: boolean;
  /** Which run of the deletion works on it, and when it last said so (ms); an older claim is taken over. */
  worker: string;
  heartbeatAt: number;
}

/** What every service may read of a record in `corral_tenants` (tenancy writes it and keeps more in it). */
export interface TenantRecordHead {
  tenant: Tenant;
  /**
   * Made at creation: a later tenant of the same name gets another, so a request that read the tenant before it
   * was deleted cannot act on its successor. Absent on records written before it existed.
   */
  uid?: string;
  deleting?: TenantDeletion;
}

/** The record of a tenant that exists, or undefined for no record and for a tenant being deleted. */
export function liveTenantRecord<R extends TenantRecordHead>(record: R | undefined): R | undefined {
  return record && !record.deleting ? record : undefined;
}
