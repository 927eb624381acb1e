/** @corral/contracts: the pure contracts every service shares (no I/O, no NATS). Explicit exports only. */
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
  PluginCapabilities,
  PluginField,
  PluginParameterSet,
  PluginSpec,
} from "./entities.js";
export { encode, decode, withEncodedEntries, type EncodedEntry } from "./codec.js";
export { splitServerList, redactUrls, withUrlCredentials } from "./url-credentials.js";
export type { UrlCredentials, ServerList } from "./url-credentials.js";
export type { Identity, ApiRequest, QueryText } from "./api-request.js";
export { endpoints, endpointList } from "./endpoints/table.js";
export type {
  Endpoints,
  EndpointName,
  RequestOf,
  RequestSchemasOf,
  DecodedRequestOf,
  ReplyOf,
  QueryOf,
  ServedEndpointName,
} from "./endpoints/table.js";
export { restPath } from "./endpoints/rest-path.js";
export type { BodyOf } from "./endpoints/rest-path.js";
export type {
  Endpoint,
  RestBinding,
  RestRoute,
  Access,
  Method,
  BodyKind,
  ServiceName,
  QueryParameter,
  QueryParameters,
  RequestSchemas,
  DecodedApiRequest,
  ErrorAnswers,
} from "./endpoints/endpoint.js";
export type { JsonSchema } from "./endpoints/json-schema.js";
export { openApiDocument, openApiPath } from "./endpoints/openapi.js";
export type { OpenApiDocument, DocOperation, DocMethod } from "./endpoints/openapi.js";
export type { TenantWriteBody, HostView } from "./endpoints/tenancy.js";
export type {
  CreateClusterBody,
  CreateClusterRequest,
  AddNodesRequest,
  RemoveNodesRequest,
  ReplaceNodeRequest,
  RollingRequest,
  JobStarted,
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
  DryRunNode,
  DryRunTask,
  DryRunResult,
} from "./endpoints/clusters.js";
export { DRY_RUN_CLUSTER_ID, MAX_CLUSTER_SIZE, jobStartedSchema } from "./endpoints/clusters.js";
export type { PluginSpecView, ResourceMeta, CopyTenantResult, PurgeResult } from "./endpoints/plugins.js";
export type { QueueCounts, NodeUsageAnswer } from "./endpoints/metrics.js";
export type { VerifiedToken } from "./endpoints/auth.js";
export type {
  CatalogList,
  LayoutCatalog,
  LayoutRequest,
  NodeProperties,
  SolvedNode,
  NodeLayoutCount,
  LayoutSolution,
  SolverStats,
  ExistingNode,
  AddServicesRequest,
  ChangedNode,
  AddServicesResult,
  MachineTypeCatalog,
  NewNodeNaming,
  GrowRequest,
  GrowResult,
  PlanNode,
  PlanOptions,
  PlanRequest,
  PlannedTask,
  Plan,
  MacroNodeProperties,
  MacroNode,
  MacroClusterInput,
  ExpandRequest,
} from "./endpoints/solver-types.js";
export { ResourceStatus, RESOURCE_STATUSES } from "./resource-status.js";
export type { AuditBatch, AuditEntry, AuditMessage, AuditPage, AuditPosition, ListedAuditEntry } from "./audit.js";
export { AUDIT_BATCH_VERSION, auditIdOf, auditPositionOf, compareAuditIds, compareAuditPositions, entriesOfAuditMessage, latestAuditId } from "./audit.js";
export { AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX } from "./endpoints/audit.js";
export { DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES, WEBHOOK_SECRET_PATTERN, WEBHOOK_SECRET_PREFIX, WEBHOOK_TEST_EVENT } from "./webhooks.js";
export type {
  CreatedWebhook,
  DeliveryStatus,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookDisabled,
  WebhookEventType,
  WebhookPayload,
  WebhookRecord,
  WebhookView,
} from "./webhooks.js";
export { WEBHOOK_DELIVERIES_DEFAULT, WEBHOOK_DELIVERIES_MAX } from "./endpoints/webhooks.js";
export { keyToken, fromKeyToken, kvKey, pluginTypeKey } from "./kv-keys.js";
export type { HostState, HostAllocation } from "./host-allocation.js";
export {
  subjects,
  endpointSubject,
  queues,
  buckets,
  bucketSettings,
  kvStream,
  kvSubjectPrefix,
  objectStores,
  objectStoreStream,
  objectChunksSubject,
  streams,
  auditSubject,
  streamSubjects,
  taskSubject,
  resultSubject,
  resultBatchSubject,
  eventSubject,
  eventFilter,
  clusterEventSubject,
  clusterEventFilter,
  tenantClusterEventFilter,
  eventsRepublish,
  liveClusterEventsFilter,
  liveClusterEventOf,
  healthReportSubject,
  healthReportFilter,
  healthReportTenantOf,
  healthCheckSubject,
  healthCheckFilter,
  tenantStreamFilters,
  consumers,
  taskConsumerName,
  PROVISIONER_INBOX_PREFIX,
  inboxPrefixOf,
  SUPERADMIN_TENANT,
  ADMIN_USER,
} from "./subjects.js";
export type { CrudSubjects, StreamName } from "./subjects.js";
export { CLUSTER_EVENT_TYPES, OUTPUT_TAIL_CHARS, clientEventsOf, EVENT_SOCKET_PROTOCOL, eventSocketProtocols, socketCredentialsOf } from "./cluster-events.js";
export type {
  ClusterEventType,
  ClusterEventBase,
  StepProgress,
  ClusterStatusEvent,
  LeaseChangedEvent,
  PlanStageEvent,
  PlanProgressEvent,
  PlanFinishedEvent,
  TaskEventFields,
  TaskStartedEvent,
  TaskEndedEvent,
  NodeHealthEvent,
  ClusterStreamEvent,
  DeliveredClusterEvent,
  EventSocketRequest,
  EventSocketMessage,
  SocketCredentials,
} from "./cluster-events.js";
export { liveTenantRecord } from "./tenant-record.js";
export type { TenantDeletion, TenantRecordHead } from "./tenant-record.js";
export { isTerminatedCluster } from "./cluster-record.js";
export type { ClusterRecordHead } from "./cluster-record.js";
export {
  isValidName,
  parseName,
  describeValue,
  parseProvider,
  mergeProviderUpdate,
  parseMachineType,
  parseService,
  checkClusterTemplate,
  parseClusterTemplate,
  parseCatalogSnapshot,
  requestValidator,
  bodyValidator,
  paramsValidator,
  queryValidator,
  FieldProblem,
  primaryForm,
} from "./validation/index.js";
export type { Validator } from "./validation/index.js";
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
  ASSIGNMENT_KEY,
  PROVISIONER_HEARTBEAT_MS,
  PROVISIONER_DEAD_AFTER_MS,
  isProvisionerAlive,
} from "./provisioners.js";
export type { ProvisionerRecord, WorkerAssignment } from "./provisioners.js";
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
export { ServerSentEventParser, serverSentEvents } from "./server-sent-events.js";
export type { ServerSentEvent } from "./server-sent-events.js";
export {
  MAX_LOG_CHARS,
  truncateLog,
  taskMessageId,
  TASK_ACK_WAIT_MS,
  RESULTS_ACK_WAIT_MS,
  DUPLICATE_WINDOW_MS,
  MAX_RESULT_BATCH,
} from "./task-protocol.js";
export type {
  TaskNodeInfo,
  TaskNodeReach,
  TaskConfig,
  TaskMessage,
  TaskOutcome,
  TaskResult,
  DispatchRef,
  ResultBatch,
} from "./task-protocol.js";
export { encodeTaskMessage } from "./task-encoding.js";
export type { ActiveSet, ActiveResourceType, ActiveResource, ResourceFormat } from "./active-set.js";
export { NODE_HEALTH_STATES, HEALTH_TARGET_MAX_AGE_MS, MAX_HEALTH_REPORT_NODES } from "./node-health.js";
export type {
  NodeHealthState,
  NodeHealthCheck,
  NodeHealth,
  HealthTarget,
  NodeHealthEntry,
  NodeHealthReport,
  HealthCheckRequest,
  HealthCheckReply,
} from "./node-health.js";
