import type { NatsConnection } from "@nats-io/transport-node";
import type { Identity } from "@corral/contracts";
import { callEndpoint } from "@corral/shared";

/**
 * Whether `identity` may follow cluster `clusterId`: asked of the clusters service exactly as
 * `GET /clusters/{id}/status` asks it, so the rules are REST's (a user sees its own clusters, an admin its
 * tenant's); throws its 404 otherwise.
 */
export async function assertClusterVisible(nc: NatsConnection, identity: Identity, clusterId: string, timeoutMs: number): Promise<void> {
  await callEndpoint(nc, "clusters.status", { identity, params: { id: clusterId }, query: {} }, { timeoutMs });
}

/** Whether `identity` may follow every cluster of its tenant: its admin only. */
export const mayFollowTenant = (identity: Identity) => identity.role === "admin" || identity.role === "superadmin";
