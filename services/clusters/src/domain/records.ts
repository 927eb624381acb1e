import type {
  ClusterRecordHead,
  ClusterStatus,
  ClusterTemplate,
  Json,
  JsonObject,
  NodeActionView,
  NodeHealth,
  PlanAction,
  Provider,
  Service,
  TaskName,
} from "@corral/contracts";
import type { PersistedActor } from "./actors.js";
import type { ClusterContext } from "./cluster-machine.js";
import type { PlanContext } from "./plan-machine.js";

/**
 * What the clusters bucket holds per cluster (everything but nodes and plans, which have their own keys). Built and
 * changed only in this folder (cluster-record.ts, cluster-steps.ts). Its head (`tenant`, `status`) is all that other
 * services and provisioners read of it (contracts' `ClusterRecordHead`, written by `withHead`); the rest, the actor's
 * state above all, is this service's own.
 */
export interface ClusterRecord extends ClusterRecordHead {
  id: string;
  tenant: string;
  /**
   * The head's copy of the actor's state (`withHead`), for readers outside this service; this service reads
   * `statusOf` (a record written before heads had a status lacks it until the reconciler writes it).
   */
  status: ClusterStatus;
  name: string;
  description: string;
  ownerId: string;
  /** ms */
  createTime: number;
  /** ms; 0 means the lease never ends. */
  expireTime: number;
  actor: PersistedActor<ClusterContext>;
  /**
   * Copies taken at creation, so later catalog changes do not affect the cluster (docs/decisions.md, A cluster keeps
   * the definitions it was created with).
   */
  provider: Provider;
  clusterTemplate: ClusterTemplate;
  services: string[];
  /** Definitions of the cluster's services as they were when the cluster got them. */
  serviceDefs: Service[];
  /**
   * How many nodes the cluster has. Node ids are `<id>-<nodenum>` for nodenums FIRST_NODENUM .. FIRST_NODENUM +
   * numNodes - 1, unless `nextNodenum` is set (see `clusterNodeIds`, domain/ids.ts).
   */
  numNodes: number;
  /** Set once the cluster gained nodes: the nodenum its next new node gets. */
  nextNodenum?: number;
  /** Nodenums below `nextNodenum` whose nodes left the cluster. */
  removedNodenums?: number[];
  /**
   * The nodes a running remove_nodes or replace_node plan takes off the cluster when it succeeds, and the services
   * that leave the cluster with them (on no other node).
   */
  leavingNodes?: { planId: string; nodenums: number[]; services?: string[] };
  config: JsonObject;
  dnsSuffix: string;
  /** Plan ids, oldest first. */
  jobs: string[];
  /** Steps of the last finished job (the running one's are read from its plan). */
  progress: { stepstotal: number; stepscompleted: number };
  /** Set once the nodes of a terminated cluster have been counted out of the tenant's usage. */
  released?: boolean;
}

/** One entry of a node's action history, stored as the API shows it. */
export type NodeAction = NodeActionView;

/** A node as stored. */
export interface ClusterNode {
  id: string;
  clusterId: string;
  nodenum: number;
  services: string[];
  properties: Record<string, Json>;
  /** Provisioner results (`providerid`, `ssh-auth`, ...), passed to later tasks of this node. */
  results: JsonObject;
  actions: NodeAction[];
  /** Dispatch keys already applied (`<taskId>.<dispatch>`), bounded; makes result handling idempotent. */
  applied: string[];
  /** Whether its machine exists and answers, as the provisioner checking its tenant last reported (absent: never). */
  health?: NodeHealth;
}

/** A plan is named by its cluster and its own id. */
export interface PlanRef {
  clusterId: string;
  planId: string;
}

/** A plan as stored: header and actor; the tasks live in pages. */
export interface PlanRecord {
  id: string;
  clusterId: string;
  tenant: string;
  action: PlanAction;
  /** ms */
  createTime: number;
  /** The user whose request started the plan; absent for a plan nobody asked for (a delete at lease expiry, a repair). */
  startedBy?: string;
  stageSizes: number[];
  actor: PersistedActor<PlanContext>;
  /** For add_services: the services each changed node holds after the change (applied before stage 0). */
  nodeServices?: Record<string, string[]>;
  /** Task results applied to the actor so far, stale ones included (see engine/dispatch-memory.ts). */
  resultsApplied?: number;
  /**
   * A small plan's tasks by stage (at most INLINE_PLAN_TASKS in all), kept in the record instead of in pages of
   * their own: creating the plan is one write instead of one per stage and the record.
   */
  tasks?: StoredTask[][];
}

/** One planned task as stored in a page. */
export interface StoredTask {
  taskName: TaskName;
  nodeId: string;
  service: string;
}

/** Plans of up to this many tasks keep them in their record (`PlanRecord.tasks`), larger ones in pages. */
export const INLINE_PLAN_TASKS = 64;
/** Tasks per stored page: keeps every KV value small whatever the cluster size. */
export const TASKS_PER_PAGE = 1000;
/** Node action history kept per node (oldest dropped). */
export const MAX_NODE_ACTIONS = 200;
/** Applied dispatch keys kept per node. */
export const MAX_APPLIED_KEYS = 400;
