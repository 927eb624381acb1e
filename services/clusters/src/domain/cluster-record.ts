import type { ClusterRecordHead, ClusterTemplate, JsonObject, Provider, Service } from "@corral/contracts";
import type { PersistedActor } from "./actors.js";
import type { ClusterContext } from "./cluster-machine.js";
import { statusOf } from "./cluster-status.js";
import type { ClusterRecord } from "./records.js";

/** What a new cluster's record is made of besides its actor: a create, checked, solved and planned. */
export interface NewCluster {
  id: string;
  tenant: string;
  name: string;
  description: string;
  ownerId: string;
  /** ms */
  createTime: number;
  /** ms; 0 means the lease never ends. */
  expireTime: number;
  provider: Provider;
  clusterTemplate: ClusterTemplate;
  services: string[];
  serviceDefs: Service[];
  numNodes: number;
  config: JsonObject;
  dnsSuffix: string;
  /** The create job's plan, the cluster's first job. */
  planId: string;
}

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
