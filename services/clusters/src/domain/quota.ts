import { ConflictError, type Tenant } from "@corral/contracts";

/** Live clusters and nodes of a tenant. */
export interface TenantUsage {
  clusters: number;
  nodes: number;
}

export const NO_USAGE: TenantUsage = Object.freeze({ clusters: 0, nodes: 0 });

/**
 * The 409 a reservation gets when `clusters` more clusters (one for a create, none for nodes a live cluster gains)
 * with `nodes` nodes would exceed the tenant's quotas.
 */
export function quotaRefusal(tenant: Tenant, used: TenantUsage, nodes: number, clusters: 0 | 1 = 1): ConflictError | undefined {
  if (tenant.maxClusters !== undefined && used.clusters + clusters > tenant.maxClusters) {
    return new ConflictError(
      `tenant ${tenant.name} has ${used.clusters} of its ${tenant.maxClusters} clusters (maxClusters)`,
      { quota: "maxClusters" },
      "quota_exceeded",
    );
  }
  if (tenant.maxNodes !== undefined && used.nodes + nodes > tenant.maxNodes) {
    return new ConflictError(
      `tenant ${tenant.name} uses ${used.nodes} of its ${tenant.maxNodes} nodes (maxNodes); ${nodes} more do not fit`,
      { quota: "maxNodes" },
      "quota_exceeded",
    );
  }
  return undefined;
}

/** One cluster asking for room in its tenant's usage. */
export interface ReservationRequest {
  tenant: Tenant;
  nodes: number;
  /** 0: nodes a live cluster gains. @default 1 */
  clusters?: 0 | 1;
}

/**
 * Decides reservations in arrival order, each against the quotas as the ones admitted before it left them:
 * the usage after the admitted ones, and the refusal of each refused one.
 */
export function admitReservations<R extends ReservationRequest>(
  used: TenantUsage,
  requests: readonly R[],
): { used: TenantUsage; refused: Map<R, ConflictError> } {
  const refused = new Map<R, ConflictError>();
  let next = used;
  for (const r of requests) {
    const clusters = r.clusters ?? 1;
    const refusal = quotaRefusal(r.tenant, next, r.nodes, clusters);
    if (refusal) refused.set(r, refusal);
    else next = { clusters: next.clusters + clusters, nodes: next.nodes + r.nodes };
  }
  return { used: next, refused };
}

/** The usage once `clusters` clusters (one, or none for nodes a live cluster loses) of `nodes` nodes are gone (never below zero). */
export const withoutCluster = (used: TenantUsage, nodes: number, clusters: 0 | 1 = 1): TenantUsage => ({
  clusters: Math.max(0, used.clusters - clusters),
  nodes: Math.max(0, used.nodes - nodes),
});
