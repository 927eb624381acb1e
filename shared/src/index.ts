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
export { connectNats, newInbox, PROVISIONER_INBOX_PREFIX } from "./nats.js";
export { splitServerList, redactUrls, withUrlCredentials } from "./url-credentials.js";
export type { UrlCredentials, ServerList } from "./url-credentials.js";
export type { ConnectOptions } from "./nats.js";
export { serve, call } from "./rpc.js";
export type { Identity, ApiRequest, Handler, ServeOptions, Served, CallOptions } from "./rpc.js";
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
export { subjects, queues, buckets, objectStores, SUPERADMIN_TENANT, ADMIN_USER } from "./subjects.js";
export type { CrudSubjects } from "./subjects.js";
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
export {
  TaskName,
  PROVIDER_TASKS,
  MAX_LOG_CHARS,
  truncateLog,
  streams,
  RESULTS_CONSUMER,
  taskSubject,
  taskConsumerName,
  resultSubject,
  eventSubject,
  taskMessageId,
  tenantStreamFilters,
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
