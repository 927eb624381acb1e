/** @corral/shared: the project's common library. Explicit exports only. */
export {
  CorralError,
  BadRequestError,
  UnauthorizedError,
  ForbiddenError,
  NotFoundError,
  ConflictError,
  UnavailableError,
  isCorralError,
  toWireError,
  fromWireError,
} from "./errors.js";
export type { WireError } from "./errors.js";

export {
  CatalogKind,
  CATALOG_KINDS,
  PluginKind,
  ServiceActionName,
  SERVICE_ACTION_NAMES,
} from "./entities.js";
export type {
  Json,
  JsonObject,
  Tenant,
  Provisioner,
  Provider,
  MachineType,
  HardwareType,
  ImageType,
  ServiceAction,
  DependencyOrdering,
  ServiceDependencies,
  Service,
  TemplateCompatibility,
  TemplateDefaults,
  ServiceConstraint,
  TemplateConstraints,
  LeaseDuration,
  ClusterTemplate,
  CatalogEntityByKind,
  CatalogEntity,
  CatalogSnapshot,
  PluginField,
  PluginParameterSet,
  PluginSpec,
} from "./entities.js";

export { encode, decode } from "./codec.js";
export { createLogger, silentLogger, LogLevel } from "./log.js";
export type { Logger, LoggerOptions } from "./log.js";
export { loadConfig, envNameOf, CONFIG_KEYS, HANDLER_PREFIX } from "./config.js";
export type { CorralConfig, ConfigKey, LoadConfigOptions } from "./config.js";
export { connectNats, newInbox } from "./nats.js";
export { splitServerList, redactUrls, withUrlCredentials } from "./url-credentials.js";
export type { UrlCredentials, ServerList } from "./url-credentials.js";
export type { ConnectOptions } from "./nats.js";
export { serve, call } from "./rpc.js";
export type { Identity, ApiRequest, Handler, ServeOptions, Served, CallOptions } from "./rpc.js";
export { endpoints, endpointList } from "./endpoints/table.js";
export type { Endpoints, EndpointName, RequestOf, ReplyOf, ServedEndpointName } from "./endpoints/table.js";
export type { Endpoint, RestBinding, RestRoute, Access, Method, BodyKind, ServiceName } from "./endpoints/endpoint.js";
export type { JsonSchema } from "./endpoints/json-schema.js";
export type { TenantWriteBody, HostView } from "./endpoints/tenancy.js";
export type {
  CreateClusterBody,
  ProviderFieldsBody,
  ClusterProgress,
  ClusterSummary,
  NodeActionView,
  NodeView,
  ClusterDetails,
  ClusterStatusView,
  PlanTaskView,
  PlanView,
  ClustersPurgeResult,
} from "./endpoints/clusters.js";
export type { PluginSpecView, ResourceMeta, CopyTenantResult, PurgeResult } from "./endpoints/plugins.js";
export type { QueueCounts, NodeUsageAnswer } from "./endpoints/metrics.js";
export type { VerifiedToken } from "./endpoints/auth.js";
export type { ExpandRequest } from "./endpoints/solver.js";
export { ResourceStatus, RESOURCE_STATUSES } from "./resource-status.js";
export { serveEndpoints, callEndpoint } from "./endpoint-rpc.js";
export type { HandlerRequest, EndpointHandler, EndpointHandlers, ServeEndpointsOptions, ServingService } from "./endpoint-rpc.js";
export {
  openBucket,
  isCasConflict,
  readValue,
  putValue,
  createValue,
  updateValue,
  deleteValue,
  modifyValue,
  listKeys,
  listValues,
  purgeKeys,
  RevisionCache,
  KeyTurns,
  processTurns,
} from "./kv.js";
export type { KV, Versioned, Modification, ModifyOptions } from "./kv.js";
export { BoundedCache } from "./bounded-cache.js";
export { jsRequests, JsApiError } from "./js-requests.js";
export type { JsRequests, JsPublishOptions, StoredMsg } from "./js-requests.js";
export { keyToken, fromKeyToken, kvKey, pluginTypeKey } from "./kv-keys.js";
export {
  HOSTPOOL_PROVIDER_TYPE,
  DEFAULT_SSH_PORT,
  HostListError,
  hostId,
  parseHostEntry,
  parseHostList,
  hostAllocationKey,
  hostAllocationFilter,
} from "./hostpool.js";
export type { HostEntry, HostState, HostAllocation } from "./hostpool.js";
export {
  subjects,
  queues,
  buckets,
  kvStream,
  kvSubjectPrefix,
  objectStores,
  objectStoreStream,
  objectChunksSubject,
  streams,
  streamSubjects,
  taskSubject,
  resultSubject,
  eventSubject,
  eventFilter,
  tenantStreamFilters,
  consumers,
  taskConsumerName,
  PROVISIONER_INBOX_PREFIX,
  SUPERADMIN_TENANT,
  ADMIN_USER,
} from "./subjects.js";
export type { CrudSubjects, StreamName } from "./subjects.js";
export { liveTenantRecord } from "./tenant-record.js";
export type { TenantDeletion, TenantRecordHead } from "./tenant-record.js";
export {
  isValidName,
  parseId,
  parseName,
  getOwn,
  requireObject,
  optionalObject,
  optionalString,
  optionalName,
  parseNameList,
  optionalNameList,
  parseInteger,
  optionalInteger,
  parseBoolean,
  parseJsonObject,
  describeValue,
  parseTenant,
  parseTenantWrite,
  parseProvider,
  mergeProviderUpdate,
  parseMachineType,
  parseService,
  parseClusterTemplate,
  parseCatalogSnapshot,
} from "./validation/index.js";
export type { ValidationContext } from "./validation/index.js";
export { TaskName, TASK_KINDS, NODE_TASKS, PROVIDER_TASKS, isTaskName, serviceActionOf } from "./task-names.js";
export type { TaskKind } from "./task-names.js";
export {
  ClusterStatus,
  CLUSTER_STATUSES,
  ClusterAction,
  PlanAction,
  planActionOf,
  parsePlanAction,
} from "./cluster-actions.js";
export type { PlannedClusterAction } from "./cluster-actions.js";
export {
  MAX_LOG_CHARS,
  truncateLog,
  taskMessageId,
  TASK_ACK_WAIT_MS,
  RESULTS_ACK_WAIT_MS,
  DUPLICATE_WINDOW_MS,
  ensureStreams,
  ensureTaskConsumer,
  ensureResultsConsumer,
} from "./tasks.js";
export type { TaskNodeInfo, TaskConfig, TaskMessage, TaskOutcome, TaskResult } from "./tasks.js";
export {
  ASSIGNMENT_KEY,
  PROVISIONER_HEARTBEAT_MS,
  PROVISIONER_DEAD_AFTER_MS,
  isProvisionerAlive,
} from "./provisioners.js";
export type { ProvisionerRecord, WorkerAssignment } from "./provisioners.js";
export { openClusterRecordReader, isTerminatedCluster } from "./cluster-records.js";
export type { ClusterRecordHead, ClusterRecordReader } from "./cluster-records.js";
export { openPluginTypeReader } from "./plugin-types.js";
export { openActiveSetReader } from "./active-sets.js";
export { openAssignmentReader } from "./assignments.js";
export type { AssignmentReader } from "./assignments.js";
export type { ActiveSet, ActiveResourceType, ActiveResource, ResourceFormat, ActiveSetReader } from "./active-sets.js";
export type { PluginTypeReader } from "./plugin-types.js";
export { runServiceProcess } from "./service-process.js";
export type { ServiceContext, ServiceProcessOptions } from "./service-process.js";
export { readObjectChunks } from "./object-reader.js";
export { installationId } from "./installation.js";
export { retryingOnce } from "./retrying-once.js";
export {
  REDACTED,
  sensitiveFieldsOf,
  seesSecrets,
  redactProvider,
  secretValues,
  redactText,
  keepRedactedValues,
} from "./sensitive-fields.js";
export type { SensitiveFields } from "./sensitive-fields.js";
