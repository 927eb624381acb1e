import { ConflictError, NotFoundError, type ClusterAction, type ClusterStatus, type Identity } from "@corral/contracts";
import type { ClusterRecord } from "./records.js";

/** The cluster's status: the state of its actor. */
export const statusOf = (cluster: Pick<ClusterRecord, "actor">) => cluster.actor.value as ClusterStatus;

/** The plan of the cluster's current job, or of its last one when none runs. */
export const currentPlanOf = (cluster: Pick<ClusterRecord, "actor">): string => cluster.actor.context.planId;

/** The 409 of an action the cluster does not take now: busy with another job, or in a state that forbids it. */
export function jobRefusal(cluster: ClusterRecord, action: ClusterAction): ConflictError {
  const status = statusOf(cluster);
  if (status === "pending") {
    return new ConflictError(`cluster ${cluster.id} is busy with ${cluster.actor.context.action}; try again when it finishes`, { status }, "cluster_busy");
  }
  return new ConflictError(`cluster ${cluster.id} is ${status}; ${action} is not allowed in that state`, { status }, "wrong_state");
}

/** The 409 of a lease extension while the cluster is busy or terminated. */
export function leaseRefusal(cluster: ClusterRecord): ConflictError {
  const status = statusOf(cluster);
  return new ConflictError(`cluster ${cluster.id} is ${status}; its lease cannot be extended now`, { status });
}

/** Whether the caller may see the cluster: a user sees its own, an admin the tenant's. */
export const isVisibleTo = (cluster: ClusterRecord, identity: Identity): boolean =>
  cluster.tenant === identity.tenant && (identity.role !== "user" || cluster.ownerId === identity.userId);

/** The cluster as the caller may see it: one it may not see is a 404. */
export function visibleCluster(cluster: ClusterRecord | undefined, identity: Identity, id: string): ClusterRecord {
  if (!cluster || !isVisibleTo(cluster, identity)) throw new NotFoundError("cluster", id);
  return cluster;
}
