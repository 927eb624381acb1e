import type { ClusterRecordHead } from "@corral/contracts";
import type { PersistedActor } from "./actors.js";
import type { ClusterContext } from "./cluster-machine.js";
import { statusOf } from "./cluster-status.js";
import type { ClusterRecord } from "./records.js";

/**
 * What a new cluster's record is made of besides what its actor and jobs make: a create, checked, solved and
 * planned, with the plan of its create job (its first job).
 */
export type NewCluster = Omit<ClusterRecord, "status" | "actor" | "jobs" | "progress" | "released"> & { planId: string };

/** The head of a cluster record: what other services and provisioners read of it. */
export const headOf = (record: Pick<ClusterRecord, "tenant" | "actor">): Required<ClusterRecordHead> => ({
  tenant: record.tenant,
  status: statusOf(record),
});

/** The record with the head its actor's state makes: every record this service writes has been through here. */
export const withHead = (record: Omit<ClusterRecord, "status">): ClusterRecord => ({ ...record, ...headOf(record) });

/** Whether the stored head says what the actor says (not on a record written before heads had a status). */
export const hasCurrentHead = (record: ClusterRecord): boolean => record.status === statusOf(record);

/** A new cluster's record around its actor's first snapshot. */
export function newClusterRecord({ planId, ...cluster }: NewCluster, actor: PersistedActor<ClusterContext>): ClusterRecord {
  return withHead({ ...cluster, actor, jobs: [planId], progress: { stepstotal: 0, stepscompleted: 0 } });
}
