/** Endpoints the clusters service answers: clusters, their plans, config and services, node properties. */
import { CLUSTER_STATUSES, ClusterAction, PlanAction, type ClusterStatus } from "../cluster-actions.js";
import type { ClusterTemplate, Json, JsonObject, Provider } from "../entities.js";
import { subjects } from "../subjects.js";
import { TaskName } from "../task-names.js";
import { endpointsOf, route } from "./endpoint.js";
import { clusterTemplateSchema, providerSchema } from "./entity-schemas.js";
import {
  anyJson,
  anyObject,
  arrayOf,
  boolean,
  count,
  integer,
  objectOf,
  oneOfValues,
  recordOf,
  string,
  type JsonSchema,
} from "./json-schema.js";

/** `POST /clusters`. */
export interface CreateClusterBody {
  name: string;
  clusterTemplate: string;
  numMachines: number;
  description?: string;
  imagetype?: string;
  hardwaretype?: string;
  provider?: string;
  providerFields?: JsonObject;
  services?: string[];
  /** ms; 0: the template's maximum. */
  initialLeaseDuration?: number;
  dnsSuffix?: string;
  config?: JsonObject;
}

/** Delete, start, stop and restart take only the provider fields a provider type asks users for. */
export interface ProviderFieldsBody {
  providerFields?: JsonObject;
}

/** Live progress of a cluster's current or last job. */
export interface ClusterProgress {
  action: ClusterAction;
  actionstatus: string;
  stepstotal: number;
  stepscompleted: number;
}

/** What both forms of a cluster show. */
interface ClusterBasics {
  id: string;
  name: string;
  description: string;
  /** ms */
  createTime: number;
  /** ms; 0: the lease never ends. */
  expireTime: number;
  services: string[];
  ownerId: string;
  status: ClusterStatus;
  progress: ClusterProgress;
}

/** The summary form of a cluster (`GET /clusters`). */
export interface ClusterSummary extends ClusterBasics {
  numNodes: number;
  provider: { name: string };
  clusterTemplate: { name: string };
}

/** One entry of a node's action history. */
export interface NodeActionView {
  taskId: string;
  service: string;
  action: TaskName;
  submitTime: number;
  statusTime: number;
  status: "complete" | "failed";
  stdout?: string;
  stderr?: string;
}

/** A node as the full form shows it. */
export interface NodeView {
  id: string;
  clusterId: string;
  services: string[];
  properties: Record<string, Json>;
  actions: NodeActionView[];
}

/** The full form of a cluster (`GET /clusters/{id}`). */
export interface ClusterDetails extends ClusterBasics {
  provider: Provider;
  clusterTemplate: ClusterTemplate;
  jobs: string[];
  config: JsonObject;
  nodes: NodeView[];
}

/** The body of `GET /clusters/{id}/status`. */
export interface ClusterStatusView {
  clusterid: string;
  status: ClusterStatus;
  action: ClusterAction;
  actionstatus: string;
  stepstotal: number;
  stepscompleted: number;
}

/** One task of a plan view. */
export interface PlanTaskView {
  id: string;
  taskName: TaskName;
  nodeId: string;
  service?: string;
}

/** A plan as the API shows it. */
export interface PlanView {
  id: string;
  clusterId: string;
  /** Upper case, e.g. CLUSTER_CREATE. */
  action: PlanAction;
  currentStage: number;
  status: string;
  createTime: number;
  stages: PlanTaskView[][];
}

/** A node as a dry run shows it: the layout it would have once the request is carried out. */
export interface DryRunNode {
  /** Node id; a create's nodes are numbered under {@link DRY_RUN_CLUSTER_ID}, the cluster's id being taken only when it is created. */
  id: string;
  hostname: string;
  /** The node's services after the request, sorted. */
  services: string[];
  hardwaretype: string;
  imagetype: string;
}

/** One task the plan would run; `service` is empty for node tasks (CREATE, CONFIRM, BOOTSTRAP, DELETE). */
export interface DryRunTask {
  taskName: TaskName;
  nodeId: string;
  service: string;
}

/**
 * What a request with `?dryRun=true` answers (like `terraform plan`): the layout and the plan the request would
 * produce, after the same checks, with nothing created, stored or counted.
 */
export interface DryRunResult {
  dryRun: true;
  /** The cluster the request is about; {@link DRY_RUN_CLUSTER_ID} for a create. */
  clusterId: string;
  layout: { services: string[]; nodes: DryRunNode[] };
  /** Every task of a stage ends before the next stage starts. */
  plan: { action: PlanAction; stages: DryRunTask[][] };
}

/** The cluster id a dry-run create shows in its node ids and hostnames. */
export const DRY_RUN_CLUSTER_ID = "new";

/** What `corral.clusters.purgeTenant` answers: `done` once nothing of the tenant is left. */
export interface ClustersPurgeResult {
  done: boolean;
  removed: number;
}

const names = arrayOf(string);
const taskName = oneOfValues(Object.values(TaskName));
const clusterStatus = oneOfValues(CLUSTER_STATUSES);
const clusterAction = oneOfValues(Object.values(ClusterAction));
const providerFields = { providerFields: anyObject };

const progressSchema = objectOf({ action: clusterAction, actionstatus: string, stepstotal: count, stepscompleted: count });

const clusterBasics = {
  id: string,
  name: string,
  description: string,
  createTime: count,
  expireTime: count,
  services: names,
  ownerId: string,
  status: clusterStatus,
  progress: progressSchema,
};

const clusterSummarySchema = objectOf({
  ...clusterBasics,
  numNodes: count,
  provider: objectOf({ name: string }),
  clusterTemplate: objectOf({ name: string }),
});

const nodeViewSchema = objectOf({
  id: string,
  clusterId: string,
  services: names,
  properties: recordOf(anyJson),
  actions: arrayOf(
    objectOf(
      {
        taskId: string,
        service: string,
        action: taskName,
        submitTime: count,
        statusTime: count,
        status: oneOfValues(["complete", "failed"]),
      },
      { optional: { stdout: string, stderr: string } },
    ),
  ),
});

const clusterDetailsSchema = objectOf({
  ...clusterBasics,
  provider: providerSchema,
  clusterTemplate: clusterTemplateSchema,
  jobs: names,
  config: anyObject,
  nodes: arrayOf(nodeViewSchema),
});

const clusterStatusSchema = objectOf({
  clusterid: string,
  status: clusterStatus,
  action: clusterAction,
  actionstatus: string,
  stepstotal: count,
  stepscompleted: count,
});

const planViewSchema = objectOf({
  id: string,
  clusterId: string,
  action: oneOfValues(Object.values(PlanAction)),
  currentStage: count,
  status: string,
  createTime: count,
  stages: arrayOf(arrayOf(objectOf({ id: string, taskName, nodeId: string }, { optional: { service: string } }))),
});

const dryRunResultSchema = objectOf({
  dryRun: { type: "boolean", enum: [true] },
  clusterId: string,
  layout: objectOf({
    services: names,
    nodes: arrayOf(objectOf({ id: string, hostname: string, services: names, hardwaretype: string, imagetype: string })),
  }),
  plan: objectOf({
    action: oneOfValues(Object.values(PlanAction)),
    stages: arrayOf(arrayOf(objectOf({ taskName, nodeId: string, service: string }))),
  }),
});

const createClusterSchema = objectOf(
  { name: string, clusterTemplate: string, numMachines: integer },
  {
    optional: {
      description: string,
      imagetype: string,
      hardwaretype: string,
      provider: string,
      services: names,
      initialLeaseDuration: count,
      dnsSuffix: string,
      config: anyObject,
      ...providerFields,
    },
    additionalProperties: true,
  },
);

const providerFieldsSchema: JsonSchema = objectOf({}, { optional: providerFields, additionalProperties: true });

const define = endpointsOf("clusters");
const c = subjects.clusters;

/** start, stop or restart the services of a cluster: all of them, or the one named in the path. */
const runServices = (op: "start" | "stop" | "restart", subject: string) =>
  define.rest<ProviderFieldsBody, void | DryRunResult, "dryRun">({
    subject,
    routes: [route("POST", `/clusters/:id/services/${op}`), route("POST", `/clusters/:id/services/:service/${op}`)],
    access: "user",
    body: "optional",
    request: providerFieldsSchema,
    reply: "empty",
    dryRunReply: dryRunResultSchema,
  });

export const clusterEndpoints = {
  "clusters.list": define.get<ClusterSummary[], "status">(c.list, "/clusters", "user", arrayOf(clusterSummarySchema), {
    status: {
      description: "Only clusters in one of these statuses (comma separated, any case); absent or empty: every status.",
      schema: arrayOf(clusterStatus),
    },
  }),
  "clusters.create": define.rest<CreateClusterBody, { id: string } | DryRunResult, "dryRun">({
    subject: c.create,
    routes: [route("POST", "/clusters")],
    access: "user",
    body: "json",
    request: createClusterSchema,
    reply: objectOf({ id: string }),
    dryRunReply: dryRunResultSchema,
  }),
  "clusters.get": define.get<ClusterDetails>(c.get, "/clusters/:id", "user", clusterDetailsSchema),
  "clusters.extendLease": define.rest<{ expireTime: number }, void>({
    subject: c.extendLease,
    routes: [route("POST", "/clusters/:id")],
    access: "user",
    body: "json",
    request: objectOf({ expireTime: count }, { additionalProperties: true }),
    reply: "empty",
  }),
  "clusters.delete": define.rest<ProviderFieldsBody, void | DryRunResult, "dryRun">({
    subject: c.delete,
    routes: [route("DELETE", "/clusters/:id")],
    access: "user",
    body: "optional",
    request: providerFieldsSchema,
    reply: "empty",
    dryRunReply: dryRunResultSchema,
  }),
  "clusters.status": define.get<ClusterStatusView>(c.status, "/clusters/:id/status", "user", clusterStatusSchema),
  "clusters.plans": define.get<PlanView[]>(c.plans, "/clusters/:id/plans", "user", arrayOf(planViewSchema)),
  "clusters.plan": define.get<PlanView>(c.plan, "/clusters/:id/plans/:planId", "user", planViewSchema),
  "clusters.getConfig": define.get<JsonObject>(c.getConfig, "/clusters/:id/config", "user", anyObject),
  "clusters.putConfig": define.rest<{ config: JsonObject; restart?: boolean } & ProviderFieldsBody, void | DryRunResult, "dryRun">({
    subject: c.putConfig,
    routes: [route("PUT", "/clusters/:id/config")],
    access: "user",
    body: "json",
    request: objectOf({ config: anyObject }, { optional: { restart: boolean, ...providerFields }, additionalProperties: true }),
    reply: "empty",
    dryRunReply: dryRunResultSchema,
  }),
  "clusters.getServices": define.get<string[]>(c.getServices, "/clusters/:id/services", "user", names),
  "clusters.addServices": define.rest<{ services: string[] } & ProviderFieldsBody, void | DryRunResult, "dryRun">({
    subject: c.addServices,
    routes: [route("POST", "/clusters/:id/services")],
    access: "user",
    body: "json",
    request: objectOf({ services: names }, { optional: providerFields, additionalProperties: true }),
    reply: "empty",
    dryRunReply: dryRunResultSchema,
  }),
  "clusters.startServices": runServices("start", c.startServices),
  "clusters.stopServices": runServices("stop", c.stopServices),
  "clusters.restartServices": runServices("restart", c.restartServices),
  "clusters.nodeProperties": define.rest<
    { clusterId: string; properties?: string[]; services?: string[] },
    Record<string, Record<string, Json>>
  >({
    subject: c.nodeProperties,
    routes: [route("POST", "/getNodeProperties")],
    access: "user",
    body: "json",
    request: objectOf({ clusterId: string }, { optional: { properties: names, services: names }, additionalProperties: true }),
    reply: recordOf(recordOf(anyJson)),
  }),
};

export const clustersInternalEndpoints = {
  /**
   * Tenant deletion: removes up to a batch of the tenant's clusters with everything kept for them, then its task
   * queue, results, events and usage. Idempotent; call again until `done`.
   */
  "clusters.purgeTenant": define.internal<{ tenant: string }, ClustersPurgeResult>({
    subject: c.purgeTenant,
    request: objectOf({ tenant: string }),
    reply: objectOf({ done: boolean, removed: count }),
  }),
};
