/** @corral/shared: the runtime every service shares (NATS, KV, JetStream, service process). Explicit exports only. */
export { batchedLines, createLogger, silentLogger, LogLevel } from "./log.js";
export type { Logger, LoggerOptions } from "./log.js";
export { loadConfig, envNameOf, CONFIG_KEYS, HANDLER_PREFIX, METRICS_PROCESSES, metricsPortKey, instancesKey, INSTANCE_ENV } from "./config.js";
export type { CorralConfig, ConfigKey, LoadConfigOptions, MetricsProcess } from "./config.js";
export { createMetricsRegistry, sampledGauge } from "./metrics/registry.js";
export type { MetricsRegistry, SampledGaugeOptions } from "./metrics/registry.js";
export { LabeledCounter, LabeledHistogram, seriesByStatus, oncePerRegistry } from "./metrics/series.js";
export type { CounterSeries, HistogramSeries, HistogramOptions, SeriesOptions, Labels } from "./metrics/series.js";
export { startMetricsServer } from "./metrics/server.js";
export type { MetricsServer, MetricsServerOptions } from "./metrics/server.js";
export { REQUEST_ID_HEADER, requestIdOf } from "./metrics/request-id.js";
export { connectNats, newInbox } from "./nats.js";
export { CLUSTER_REPLICAS, corralStreamNames, migrateStoreReplicas, natsServerCount, setStoreReplicas, storeReplicas } from "./replicas.js";
export type { ReplicaChange } from "./replicas.js";
export { openObjectStore } from "./object-stores.js";
export type { ObjectStore } from "./object-stores.js";
export type { ConnectOptions } from "./nats.js";
export { serve, call } from "./rpc.js";
export type { Handler, ServeOptions, Served, CallOptions } from "./rpc.js";
export { serveEndpoints, callEndpoint, forwardRestCall } from "./endpoint-rpc.js";
export type {
  HandlerRequest,
  EndpointHandler,
  EndpointHandlers,
  ServeEndpointsOptions,
  ServingService,
  RestServedEndpointName,
} from "./endpoint-rpc.js";
export {
  openBucket,
  isCasConflict,
  readBytes,
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
export type { HostEntry } from "./hostpool.js";
export { ensureStreams, ensureTaskConsumer, ensureResultsConsumer } from "./tasks.js";
export { ensureDurableConsumer, pullBatches } from "./durable-consumers.js";
export type { DurableConsumerConfig, BatchLoop, BatchLoopOptions } from "./durable-consumers.js";
export { openAuditLog, type AuditLog, type AuditLogOptions } from "./audit-log.js";
export { applyAuditRetention, type AuditRetention } from "./audit-stream.js";
export { ownResults, planBatches, resultsMessage, resultsOf, storedResults } from "./result-messages.js";
export { ensureLiveEventRepublish } from "./live-events.js";
export { openClusterRecordReader } from "./cluster-records.js";
export type { ClusterRecordReader } from "./cluster-records.js";
export { openPluginTypeReader } from "./plugin-types.js";
export { openTenantReader } from "./tenant-reader.js";
export type { TenantReader } from "./tenant-reader.js";
export { openTenantCache } from "./tenant-cache.js";
export type { TenantCache } from "./tenant-cache.js";
export { openActiveSetReader } from "./active-sets.js";
export { openAssignmentReader } from "./assignments.js";
export type { AssignmentReader } from "./assignments.js";
export type { ActiveSetReader } from "./active-sets.js";
export type { PluginTypeReader } from "./plugin-types.js";
export { runServiceGroup, runServiceProcess } from "./service-process.js";
export type { ServiceContext, ServiceDefinition, ServiceGroupOptions, ServiceMember, ServiceProcessOptions } from "./service-process.js";
export { readObjectChunks } from "./object-reader.js";
export { installationId } from "./installation.js";
export { retryingOnce } from "./retrying-once.js";
export { sleep, backoffMs, retryUntil, retryFor } from "./retry.js";
export type { RetryOptions, RetryForOptions } from "./retry.js";
export { followWatch } from "./follow-watch.js";
export type { FollowWatchOptions, OpenWatch } from "./follow-watch.js";
export { mapLimit } from "./map-limit.js";
export { openRedis, redisReady, redisCall, connectedMulti, REDIS_CALL_TIMEOUT_MS, REDIS_START_WAIT_MS } from "./redis.js";
export type { RedisClient, OpenRedisOptions, RedisCallOptions } from "./redis.js";
