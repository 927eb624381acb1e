import type { JsonObject, Plan, PlannedClusterAction, RollingRequest } from "@corral/contracts";
import type { JobChanges } from "./cluster-machine.js";
import type { ClusterNode, ClusterRecord } from "./records.js";

/** What an operation on an existing cluster asks for. */
export interface JobRequest {
  action: PlannedClusterAction;
  /** The user whose request it is (recorded on its plan); absent for a job nobody asked for. */
  startedBy?: string;
  /** For single-service start/stop/restart. */
  service?: string;
  /** For add_services: the services added and the nodes' services after the change. */
  addedServices?: string[];
  nodeServices?: Record<string, string[]>;
  /**
   * For add_nodes: the new nodes, stored before the write that starts the job (which makes them the cluster's), and
   * the remaining nodes whose expanded config they change (CONFIGURE, and with `restart` a restart).
   */
  addedNodes?: ClusterNode[];
  /** For remove_nodes and replace_node: the nodes that leave the cluster when the plan succeeds. */
  removedNodes?: ClusterNode[];
  /** Removed nodes whose machines the provider cannot reach: they get no task (a replaced node found missing). */
  unreachableNodes?: string[];
  /** For remove_nodes: the services on the removed nodes and on no other, which leave the cluster with them. */
  leavingServices?: string[];
  changedNodes?: string[];
  restart?: boolean;
  /** Restart in batches (docs/catalog.md, Rolling restarts): restart_services, configure with restart, `restart`. */
  rolling?: RollingRequest;
  /** Changes made to the cluster record in the same write that starts the job (config, services). */
  changes?: JobChanges;
  /**
   * Provider fields the request gave, checked before the job is planned: kept for this job's tasks until its plan
   * ends. Absent for a job nobody asked for (a delete at lease expiry), which needs none and gets none.
   */
  providerFields?: JsonObject;
}

/** A job checked and planned, nothing of it stored yet: what starting it writes and a dry run answers. */
export interface PreparedJob {
  cluster: ClusterRecord;
  request: JobRequest;
  /**
   * The cluster's nodes as stored (before the job; `request.nodeServices` has their services after it, and
   * `request.addedNodes` the nodes it adds).
   */
  nodes: ClusterNode[];
  plan: Plan;
}
