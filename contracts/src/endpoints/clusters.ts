/** Endpoints the clusters service answers: clusters, their plans, config and services, node properties. */
import { Type, type Static, type StaticDecode, type TSchema } from "@sinclair/typebox";
import { CLUSTER_STATUSES, ClusterAction, PlanAction } from "../cluster-actions.js";
import type { ClusterTemplate, Json, Provider } from "../entities.js";
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

/** `rolling` of a request that restarts services (docs/catalog.md, Rolling restarts). */
const rollingField = bodyOf(
  {
    maxUnavailable: integerField({
      minimum: 1,
      maximum: MAX_CLUSTER_SIZE,
      description: "At most this many nodes of any one service stopped at a time. An integer, or its digits as a string.",
    }),
  },
  {},
  {
    description:
      "Restart in batches, one after the other: at most maxUnavailable nodes of any one service stopped at a time, never fewer " +
      "than its quantities.min running. Absent: every node at once.",
  },
);
/** `rolling` as the clusters service gets it, validated and decoded. */
export type RollingRequest = StaticDecode<typeof rollingField>;
const rolling = { rolling: rollingField };

/** `PUT /clusters/{id}/config`. */
const configBody = bodyOf(
  { config: jsonObjectField() },
  { restart: booleanField({ description: "Restart the services after configuring. @default true" }), ...rolling, ...providerFields },
);

/** `POST /clusters/{id}/services`: services to add (repeats dropped). */
const addServicesBody = bodyOf({ services: distinct(arrayOf(nameField(), { minItems: 1 })) }, providerFields);

/** `POST /clusters/{id}/nodes`: nodes to add (docs/catalog.md, Growing and shrinking). */
const addNodesBody = bodyOf(
  { numMachines: integerField({ minimum: 1, maximum: MAX_CLUSTER_SIZE, description: "An integer, or its digits as a string." }) },
  {
    /** Absent or empty: the solver chooses each new node's services. */
    services: distinct(arrayOf(nameField())),
    hardwaretype: nameField(),
    imagetype: nameField(),
    restart: booleanField({ description: "Also restart the services whose config the new nodes change. @default false" }),
    ...rolling,
    ...providerFields,
  },
);
/** `POST /clusters/{id}/nodes` as the clusters service gets it, validated and decoded. */
export type AddNodesRequest = StaticDecode<typeof addNodesBody>;

/** What removing nodes takes besides the nodes: the restart of the services whose config changes, provider fields. */
const removeNodesOptions = {
  restart: booleanField({ description: "Also restart the services whose config the removal changes. @default false" }),
  ...rolling,
  ...providerFields,
};
/** `DELETE /clusters/{id}/nodes/{nodeId}` (docs/catalog.md, Growing and shrinking). */
const removeNodeBody = bodyOf({}, removeNodesOptions);
/** `POST /clusters/{id}/nodes/remove`: several nodes in one plan. */
const removeNodesBody = bodyOf({ nodes: distinct(arrayOf(Type.String({ minLength: 1 }), { minItems: 1 })) }, removeNodesOptions);
/** Removing nodes as the clusters service gets it, validated and decoded (the node of the path as `nodes`). */
export type RemoveNodesRequest = StaticDecode<typeof removeNodesBody>;

/** `POST /clusters/{id}/nodes/{nodeId}/replace`: a new machine for the node (docs/catalog.md, Growing and shrinking). */
const replaceNodeBody = bodyOf(
  {},
  {
    restart: booleanField({ description: "Also restart the services whose config the replacement changes. @default false" }),
    ...rolling,
    ...providerFields,
  },
);
/** Replacing a node as the clusters service gets it, validated and decoded. */
export type ReplaceNodeRequest = StaticDecode<typeof replaceNodeBody>;

/** `POST /getNodeProperties`. */
const nodePropertiesBody = bodyOf(
  { clusterId: Type.String({ minLength: 1 }) },
  {
    properties: arrayOf(string, { description: "Only these properties; absent or empty: all." }),
    services: arrayOf(string, { description: "Only nodes with one of these services; absent or empty: all." }),
  },
);

/** Delete, start and stop take only the provider fields a provider type asks users for (an absent body is none). */
const providerFieldsBody = bodyOf({}, providerFields);
export type ProviderFieldsBody = Static<typeof providerFieldsBody>;

/** Restart takes the provider fields and `rolling` (an absent body is neither). */
const restartServicesBody = bodyOf({}, { ...rolling, ...providerFields });

const names = arrayOf(string);
const taskName = oneOfValues(Object.values(TaskName));
const clusterStatus = oneOfValues(CLUSTER_STATUSES);
const clusterAction = oneOfValues(Object.values(ClusterAction));
const planAction = oneOfValues(Object.values(PlanAction), { description: "Upper case, e.g. CLUSTER_CREATE." });
const jsonValue = typedSchema<Json>(anyJson);
const ms = (description: string) => Type.Integer({ minimum: 0, description });

/** Live progress of a cluster's current or last job. */
const progressSchema = objectOf({ action: clusterAction, actionstatus: string, stepstotal: count, stepscompleted: count });
export type ClusterProgress = Static<typeof progressSchema>;

/** What both forms of a cluster show. */
const clusterBasics = {
  id: string,
  name: string,
  description: string,
  createTime: ms("ms since the epoch."),
  expireTime: ms("ms since the epoch; 0: the lease never ends."),
  services: names,
  ownerId: string,
  status: clusterStatus,
  progress: progressSchema,
};

/** The summary form of a cluster (`GET /clusters`). */
const clusterSummarySchema = objectOf({
  ...clusterBasics,
  numNodes: count,
  provider: objectOf({ name: string }),
  clusterTemplate: objectOf({ name: string }),
});
export type ClusterSummary = Static<typeof clusterSummarySchema>;

/** One entry of a node's action history. */
const nodeActionSchema = objectOf(
  {
    taskId: string,
    service: string,
    action: taskName,
    submitTime: count,
    statusTime: count,
    status: oneOfValues(["complete", "failed"]),
  },
  { optional: { stdout: string, stderr: string } },
);
export type NodeActionView = Static<typeof nodeActionSchema>;

/** A node as the full form shows it. */
const nodeViewSchema = objectOf(
  {
    id: string,
    clusterId: string,
    services: names,
    properties: recordOf(jsonValue),
    actions: arrayOf(nodeActionSchema),
  },
  {
    optional: {
      /** Whether the node's machine exists and answers, as its provider last told (absent: never checked). */
      health: typedSchema<NodeHealth>(
        objectOf({ state: oneOfValues(NODE_HEALTH_STATES), message: string, since: count, checkedAt: count }),
      ),
    },
  },
);
export type NodeView = Static<typeof nodeViewSchema>;

/** The full form of a cluster (`GET /clusters/{id}`). */
const clusterDetailsSchema = objectOf({
  ...clusterBasics,
  provider: typedSchema<Provider>(providerSchema),
  clusterTemplate: typedSchema<ClusterTemplate>(clusterTemplateSchema),
  jobs: names,
  config: anyObject,
  nodes: arrayOf(nodeViewSchema),
});
export type ClusterDetails = Static<typeof clusterDetailsSchema>;

/** The body of `GET /clusters/{id}/status`. */
const clusterStatusSchema = objectOf({
  clusterid: string,
  status: clusterStatus,
  action: clusterAction,
  actionstatus: string,
  stepstotal: count,
  stepscompleted: count,
});
export type ClusterStatusView = Static<typeof clusterStatusSchema>;

/** One task of a plan view. */
const planTaskSchema = objectOf({ id: string, taskName, nodeId: string }, { optional: { service: string } });
export type PlanTaskView = Static<typeof planTaskSchema>;

/** A plan as the API shows it. */
const planViewSchema = objectOf({
  id: string,
  clusterId: string,
  action: planAction,
  currentStage: count,
  status: string,
  createTime: count,
  stages: arrayOf(arrayOf(planTaskSchema)),
});
export type PlanView = Static<typeof planViewSchema>;

/** A node as a dry run shows it: the layout it would have once the request is carried out. */
const dryRunNodeSchema = objectOf({
  id: Type.String({ description: "Node id; a create's nodes are numbered under `new`, the cluster's id being taken only when it is created." }),
  hostname: string,
  services: arrayOf(string, { description: "The node's services after the request, sorted." }),
  hardwaretype: string,
  imagetype: string,
});
export type DryRunNode = Static<typeof dryRunNodeSchema>;

/** One task the plan would run; `service` is empty for node tasks (CREATE, CONFIRM, BOOTSTRAP, DELETE). */
const dryRunTaskSchema = objectOf({ taskName, nodeId: string, service: string });
export type DryRunTask = Static<typeof dryRunTaskSchema>;

/**
 * What a request with `?dryRun=true` answers (like `terraform plan`): the layout and the plan the request would
 * produce, after the same checks, with nothing created, stored or counted. Every task of a stage ends before the
 * next stage starts.
 */
const dryRunResultSchema = objectOf({
  dryRun: exactly(true),
  clusterId: Type.String({ description: "The cluster the request is about; `new` for a create." }),
  layout: objectOf({ services: names, nodes: arrayOf(dryRunNodeSchema) }),
  plan: objectOf({ action: planAction, stages: arrayOf(arrayOf(dryRunTaskSchema)) }),
});
export type DryRunResult = Static<typeof dryRunResultSchema>;

/** The cluster id a dry-run create shows in its node ids and hostnames. */
export const DRY_RUN_CLUSTER_ID = "new";

/** What `corral.clusters.purgeTenant` answers: `done` once nothing of the tenant is left. */
const purgeResultSchema = objectOf({ done: boolean, removed: count });
export type ClustersPurgeResult = Static<typeof purgeResultSchema>;

/** What a job request (delete, config, services) answers when carried out: the plan to follow at `GET /clusters/{id}/plans/{planId}`. */
export const jobStartedSchema = objectOf({ clusterId: string, planId: string });
export type JobStarted = Static<typeof jobStartedSchema>;

const define = endpointsOf("clusters");
const c = subjects.clusters;

/**
 * A job on a cluster (a user's call that runs as a plan): its body, `?dryRun=true`, the plan to follow as the
 * answer, and what a dry run answers instead.
 */
const job = <B extends TSchema, K extends "json" | "optional">(
  subject: string,
  routes: ReturnType<typeof route>[],
  bodyKind: K,
  body: B,
  errors?: Partial<Record<404 | 409, string>>,
) =>
  define.rest({
    subject,
    routes,
    access: "user",
    body: bodyKind,
    request: { body, query: Type.Object(dryRunQuery) },
    ...(errors ? { errors } : {}),
    reply: jobStartedSchema,
    dryRunReply: dryRunResultSchema,
  });

/** start, stop or restart the services of a cluster: all of them, or the one named in the path. */
const runServices = <B extends TSchema>(op: "start" | "stop" | "restart", subject: string, body: B) =>
  job(subject, [route("POST", `/clusters/:id/services/${op}`), route("POST", `/clusters/:id/services/:service/${op}`)], "optional", body);

/** The 409 of both removal routes. */
const REMOVAL_CONFLICT =
  "A removal that would break size.min, a quantities.min or a requires (named), a running action, or a cluster state that does not allow it.";

export const clusterEndpoints = {
  "clusters.list": define.get(c.list, "/clusters", "user", arrayOf(clusterSummarySchema), {
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
  "clusters.get": define.get(c.get, "/clusters/:id", "user", clusterDetailsSchema),
  "clusters.extendLease": define.rest({
    subject: c.extendLease,
    routes: [route("POST", "/clusters/:id")],
    access: "user",
    body: "json",
    request: { body: leaseExtensionBody },
    reply: "empty",
  }),
  "clusters.delete": job(c.delete, [route("DELETE", "/clusters/:id")], "optional", providerFieldsBody),
  "clusters.status": define.get(c.status, "/clusters/:id/status", "user", clusterStatusSchema),
  "clusters.plans": define.get(c.plans, "/clusters/:id/plans", "user", arrayOf(planViewSchema)),
  "clusters.plan": define.get(c.plan, "/clusters/:id/plans/:planId", "user", planViewSchema),
  "clusters.getConfig": define.get(c.getConfig, "/clusters/:id/config", "user", anyObject),
  "clusters.putConfig": job(c.putConfig, [route("PUT", "/clusters/:id/config")], "json", configBody),
  "clusters.getServices": define.get(c.getServices, "/clusters/:id/services", "user", names),
  "clusters.addServices": job(c.addServices, [route("POST", "/clusters/:id/services")], "json", addServicesBody),
  "clusters.addNodes": job(c.addNodes, [route("POST", "/clusters/:id/nodes")], "json", addNodesBody, {
    409: "The tenant's maxNodes quota, a running action, or a cluster state that does not allow adding nodes.",
  }),
  "clusters.removeNode": job(c.removeNode, [route("DELETE", "/clusters/:id/nodes/:nodeId")], "optional", removeNodeBody, {
    404: "No cluster of that id that the caller may see, or no node of that id in it.",
    409: REMOVAL_CONFLICT,
  }),
  "clusters.removeNodes": job(c.removeNodes, [route("POST", "/clusters/:id/nodes/remove")], "json", removeNodesBody, {
    404: "No cluster of that id that the caller may see, or no node of one of the ids in it.",
    409: REMOVAL_CONFLICT,
  }),
  "clusters.replaceNode": job(c.replaceNode, [route("POST", "/clusters/:id/nodes/:nodeId/replace")], "optional", replaceNodeBody, {
    404: "No cluster of that id that the caller may see, or no node of that id in it.",
    409: "The tenant's maxNodes quota (the new node is built before the old one goes), a running action, or a cluster state that does not allow it.",
  }),
  "clusters.startServices": runServices("start", c.startServices, providerFieldsBody),
  "clusters.stopServices": runServices("stop", c.stopServices, providerFieldsBody),
  "clusters.restartServices": runServices("restart", c.restartServices, restartServicesBody),
  "clusters.nodeProperties": define.rest({
    subject: c.nodeProperties,
    routes: [route("POST", "/getNodeProperties")],
    access: "user",
    body: "json",
    request: { body: nodePropertiesBody },
    errors: { 404: "No cluster of that id that the caller may see." },
    reply: recordOf(recordOf(jsonValue)),
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
    reply: purgeResultSchema,
  }),
};
