/** Endpoints the clusters service answers: clusters, their plans, config and services, node properties. */
import { Type, type Static, type StaticDecode } from "@sinclair/typebox";
import { CLUSTER_STATUSES, ClusterAction, PlanAction, type ClusterStatus } from "../cluster-actions.js";
import type { ClusterTemplate, Json, JsonObject, Provider } from "../entities.js";
import { NODE_HEALTH_STATES, type NodeHealth } from "../node-health.js";
import { subjects } from "../subjects.js";
import { TaskName } from "../task-names.js";
import { anyCaseValue, bodyOf, booleanField, distinct, dnsSuffixField, integerField, jsonObjectField, nameField } from "../validation/fields.js";
import { dryRunQuery, endpointsOf, route } from "./endpoint.js";
import { clusterTemplateSchema, providerSchema } from "./entity-schemas.js";
import {
  anyJson,
  anyObject,
  arrayOf,
  boolean,
  count,
  exactly,
  objectOf,
  oneOfValues,
  recordOf,
  string,
  typedSchema,
} from "./json-schema.js";

/** Largest cluster one request may create. */
export const MAX_CLUSTER_SIZE = 10_000;

const providerFields = {
  providerFields: jsonObjectField({ description: "Values of the provider type's user fields (secrets included), for this request only." }),
};

/** `POST /clusters`. */
const createClusterBody = bodyOf(
  {
    name: nameField(),
    clusterTemplate: nameField(),
    numMachines: integerField({ minimum: 1, maximum: MAX_CLUSTER_SIZE, description: "An integer, or its digits as a string." }),
  },
  {
    description: string,
    imagetype: nameField(),
    hardwaretype: nameField(),
    provider: nameField(),
    /** Empty: the template's default services. */
    services: arrayOf(nameField()),
    initialLeaseDuration: integerField({ description: "ms; 0: the template's maximum. An integer, or its digits as a string." }),
    dnsSuffix: dnsSuffixField(),
    config: jsonObjectField({ description: "The cluster's config; absent: the template's default config." }),
    ...providerFields,
  },
);
/** `POST /clusters` as a client sends it. */
export type CreateClusterBody = Static<typeof createClusterBody>;
/** `POST /clusters` as the clusters service gets it, validated and decoded. */
export type CreateClusterRequest = StaticDecode<typeof createClusterBody>;

/** `POST /clusters/{id}`: the new end of the lease. */
const leaseExtensionBody = bodyOf({ expireTime: integerField({ description: "ms since the epoch; an integer, or its digits as a string." }) });

/** `PUT /clusters/{id}/config`. */
const configBody = bodyOf(
  { config: jsonObjectField() },
  { restart: booleanField({ description: "Restart the services after configuring. @default true" }), ...providerFields },
);

/** `POST /clusters/{id}/services`: services to add (repeats dropped). */
const addServicesBody = bodyOf({ services: distinct(arrayOf(nameField(), { minItems: 1 })) }, providerFields);

/** `POST /getNodeProperties`. */
const nodePropertiesBody = bodyOf(
  { clusterId: Type.String({ minLength: 1 }) },
  {
    properties: arrayOf(string, { description: "Only these properties; absent or empty: all." }),
    services: arrayOf(string, { description: "Only nodes with one of these services; absent or empty: all." }),
  },
);

/** Delete, start, stop and restart take only the provider fields a provider type asks users for (an absent body is none). */
const providerFieldsBody = bodyOf({}, providerFields);
export type ProviderFieldsBody = Static<typeof providerFieldsBody>;

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
  /** Whether the node's machine exists and answers, as its provider last told (absent: never checked). */
  health?: NodeHealth;
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

/** What a job request (delete, config, services) answers when carried out: the plan to follow. */
export interface JobStarted {
  clusterId: string;
  /** The plan at `GET /clusters/{id}/plans/{planId}`. */
  planId: string;
}

const names = arrayOf(string);
const taskName = oneOfValues(Object.values(TaskName));
const clusterStatus = oneOfValues(CLUSTER_STATUSES);
const clusterAction = oneOfValues(Object.values(ClusterAction));

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
}, {
  optional: {
    health: objectOf({ state: oneOfValues(NODE_HEALTH_STATES), message: string, since: count, checkedAt: count }),
  },
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

const dryRunResultSchema = typedSchema<DryRunResult>(
  objectOf({
    dryRun: exactly(true),
    clusterId: string,
    layout: objectOf({
      services: names,
      nodes: arrayOf(objectOf({ id: string, hostname: string, services: names, hardwaretype: string, imagetype: string })),
    }),
    plan: objectOf({
      action: oneOfValues(Object.values(PlanAction)),
      stages: arrayOf(arrayOf(objectOf({ taskName, nodeId: string, service: string }))),
    }),
  }),
);

/** What a job request answers when carried out. */
export const jobStartedSchema = typedSchema<JobStarted>(objectOf({ clusterId: string, planId: string }));

const define = endpointsOf("clusters");
const c = subjects.clusters;

/** start, stop or restart the services of a cluster: all of them, or the one named in the path. */
const runServices = (op: "start" | "stop" | "restart", subject: string) =>
  define.rest({
    subject,
    routes: [route("POST", `/clusters/:id/services/${op}`), route("POST", `/clusters/:id/services/:service/${op}`)],
    access: "user",
    body: "optional",
    request: { body: providerFieldsBody, query: Type.Object(dryRunQuery) },
    reply: typedSchema<void | JobStarted>(jobStartedSchema),
    dryRunReply: dryRunResultSchema,
  });

export const clusterEndpoints = {
  "clusters.list": define.get(c.list, "/clusters", "user", typedSchema<ClusterSummary[]>(arrayOf(clusterSummarySchema)), {
    query: Type.Object({
      status: Type.Optional(
        arrayOf(anyCaseValue(CLUSTER_STATUSES), {
          description: "Only clusters in one of these statuses (comma separated, any case); absent or empty: every status.",
        }),
      ),
    }),
  }),
  "clusters.create": define.rest({
    subject: c.create,
    routes: [route("POST", "/clusters")],
    access: "user",
    body: "json",
    request: { body: createClusterBody, query: Type.Object(dryRunQuery) },
    reply: objectOf({ id: string }),
    dryRunReply: dryRunResultSchema,
  }),
  "clusters.get": define.get(c.get, "/clusters/:id", "user", typedSchema<ClusterDetails>(clusterDetailsSchema)),
  "clusters.extendLease": define.rest({
    subject: c.extendLease,
    routes: [route("POST", "/clusters/:id")],
    access: "user",
    body: "json",
    request: { body: leaseExtensionBody },
    reply: "empty",
  }),
  "clusters.delete": define.rest({
    subject: c.delete,
    routes: [route("DELETE", "/clusters/:id")],
    access: "user",
    body: "optional",
    request: { body: providerFieldsBody, query: Type.Object(dryRunQuery) },
    reply: typedSchema<void | JobStarted>(jobStartedSchema),
    dryRunReply: dryRunResultSchema,
  }),
  "clusters.status": define.get(c.status, "/clusters/:id/status", "user", typedSchema<ClusterStatusView>(clusterStatusSchema)),
  "clusters.plans": define.get(c.plans, "/clusters/:id/plans", "user", typedSchema<PlanView[]>(arrayOf(planViewSchema))),
  "clusters.plan": define.get(c.plan, "/clusters/:id/plans/:planId", "user", typedSchema<PlanView>(planViewSchema)),
  "clusters.getConfig": define.get(c.getConfig, "/clusters/:id/config", "user", anyObject),
  "clusters.putConfig": define.rest({
    subject: c.putConfig,
    routes: [route("PUT", "/clusters/:id/config")],
    access: "user",
    body: "json",
    request: {
      body: configBody,
      query: Type.Object(dryRunQuery),
    },
    reply: typedSchema<void | JobStarted>(jobStartedSchema),
    dryRunReply: dryRunResultSchema,
  }),
  "clusters.getServices": define.get(c.getServices, "/clusters/:id/services", "user", names),
  "clusters.addServices": define.rest({
    subject: c.addServices,
    routes: [route("POST", "/clusters/:id/services")],
    access: "user",
    body: "json",
    request: { body: addServicesBody, query: Type.Object(dryRunQuery) },
    reply: typedSchema<void | JobStarted>(jobStartedSchema),
    dryRunReply: dryRunResultSchema,
  }),
  "clusters.startServices": runServices("start", c.startServices),
  "clusters.stopServices": runServices("stop", c.stopServices),
  "clusters.restartServices": runServices("restart", c.restartServices),
  "clusters.nodeProperties": define.rest({
    subject: c.nodeProperties,
    routes: [route("POST", "/getNodeProperties")],
    access: "user",
    body: "json",
    request: { body: nodePropertiesBody },
    errors: { 404: "No cluster of that id that the caller may see." },
    reply: typedSchema<Record<string, Record<string, Json>>>(recordOf(recordOf(anyJson))),
  }),
};

export const clustersInternalEndpoints = {
  /**
   * Tenant deletion: removes up to a batch of the tenant's clusters with everything kept for them, then its task
   * queue, results, events and usage. Idempotent; call again until `done`.
   */
  "clusters.purgeTenant": define.internal({
    subject: c.purgeTenant,
    request: bodyOf({ tenant: nameField() }),
    reply: typedSchema<ClustersPurgeResult>(objectOf({ done: boolean, removed: count })),
  }),
};
