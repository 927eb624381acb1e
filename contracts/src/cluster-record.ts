import { ClusterStatus } from "./cluster-actions.js";

/**
 * What every service and provisioner may read of a record in `corral_clusters` (key `kvKey(clusterId)`): whose
 * cluster it is and its status. The clusters service alone writes these records and keeps more in them (its actor's
 * state, the definitions the cluster was created with), which nobody else reads. Cluster ids are never reused, so a
 * missing record is a cluster that is gone for good (its tenant was deleted and purged).
 */
export interface ClusterRecordHead {
  tenant: string;
  /** Absent on records written before it existed, until the clusters service's next reconcile run writes it. */
  status?: ClusterStatus;
}

/** Whether the cluster is terminated for good; a record without a status counts as live. */
export const isTerminatedCluster = (head: ClusterRecordHead): boolean => head.status === ClusterStatus.Terminated;
