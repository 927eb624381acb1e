/**
 * `@corral/clusters/testing`: for tests and benchmarks only, never for other services (they use
 * `@corral/clusters/readers` or the service's requests). What the service stored, read in its key layout, and its
 * engine run in-process (bench/clusters/profile.ts times it without the NATS request path).
 */
export { openStoredClusterState } from "./stored-state.js";
export type { StoredClusterState, PlannedTask, KeysKept } from "./stored-state.js";
export type { ClusterNode, ClusterRecord, PlanRecord, StoredTask } from "./domain/records.js";
export type { NodeChanges, NodeEvent } from "./domain/node-events.js";
export { createActors } from "./actor/index.js";
export type { Actors, Effects } from "./actor/index.js";
export { openEngineDeps } from "./adapters/deps.js";
export type { EngineDeps } from "./adapters/deps.js";
export { startResultsConsumer } from "./engine/results/consumer.js";
export { createCluster } from "./operations/create-cluster.js";
