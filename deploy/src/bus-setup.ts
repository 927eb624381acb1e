import type { NatsConnection } from "@nats-io/transport-node";
import { applyAuditRetention, ensureStreams, migrateStoreReplicas, openBucket, openObjectStore, retryFor, type AuditRetention, type ReplicaChange } from "@corral/shared";
import { createServiceStores } from "./service-stores.js";
import { PROVISIONER_READS_BUCKETS, PROVISIONER_READS_OBJECT_STORES } from "./bus-permissions.js";

/**
 * What the launcher creates before anything else connects (idempotent), with the services' credentials: the task,
 * result and event streams, so a provisioner that starts before the clusters service does not wait for the task
 * stream, and {@link createProvisionerStores}; new ones get the connection's replica count (`nats.replicas`), and
 * existing Corral streams, buckets and object stores whose count differs are migrated to it (migrateStoreReplicas).
 * Resolves with those migrations.
 */
export async function prepareBus(nc: NatsConnection, options: PrepareBusOptions = {}): Promise<ReplicaChange[]> {
  return retryingPlacement(async () => {
    await ensureStreams(nc);
    if (options.auditRetention) await applyAuditRetention(nc, options.auditRetention);
    await createProvisionerStores(nc);
    await createServiceStores(nc);
    return migrateStoreReplicas(nc);
  }, options);
}

export interface PrepareBusOptions extends PlacementRetryOptions {
  /** The audit log's retention (`audit.maxAgeDays`, `audit.maxBytes`); absent: the stream keeps what it has. */
  auditRetention?: AuditRetention;
}

export interface PlacementRetryOptions {
  /** How long placement errors are waited out. @default 30000 */
  retryForMs?: number;
  /** Told of each error waited out. */
  onRetry?: (err: Error) => void;
}

/**
 * JetStream's answers while a cluster's peers are still meeting, or one of them restarts: a replicated stream cannot
 * be placed for a moment ("no suitable peers for placement, peer offline"), the meta group has no leader yet, or a
 * request gets no answer in time (nats.js's TimeoutError, "timeout"; every step is create-unless-found, so asking
 * again is safe). The launcher and the tests met them right after every node had reported the others (CI, under
 * load).
 */
const TRANSIENT_PLACEMENT = /peer offline|temporarily unavailable|^timeout$/i;

/** Runs `create` (idempotent) again while it fails with a transient placement error, for at most `retryForMs`. */
export function retryingPlacement<T>(create: () => Promise<T>, options: PlacementRetryOptions = {}): Promise<T> {
  return retryFor(create, {
    forMs: options.retryForMs ?? 30_000,
    delayMs: 500,
    retryable: (err) => err instanceof Error && TRANSIENT_PLACEMENT.test(err.message),
    onRetry: (err) => options.onRetry?.(err as Error),
  });
}

/** One line on a migration of prepareBus: "CORRAL_TASKS: replicas 1 -> 3", or why it did not happen. */
export function describeReplicaChange(change: ReplicaChange): string {
  const what = `${change.stream}: replicas ${change.from} -> ${change.to}`;
  return change.error ? `${what} refused, kept at ${change.from} (${change.error})` : what;
}

/**
 * Creates every bucket and object store a provisioner reads, as the services would. Provisioners may not create
 * streams (bus-permissions.ts), so these must exist before the first one connects.
 */
export async function createProvisionerStores(nc: NatsConnection): Promise<void> {
  await Promise.all(PROVISIONER_READS_BUCKETS.map((name) => openBucket(nc, name)));
  await Promise.all(PROVISIONER_READS_OBJECT_STORES.map((name) => openObjectStore(nc, name)));
}
