import type { NatsConnection } from "@nats-io/transport-node";
import { buckets, kvKey, type Tenant } from "@corral/contracts";
import { modifyValue, openBucket, RevisionCache, type KV } from "@corral/shared";
import { admitReservations, NO_USAGE, quotaRefusal, withoutCluster, type ReservationRequest, type TenantUsage } from "../domain/quota.js";
import { readUsage } from "./usage-reader.js";

export type { TenantUsage };

/** Live clusters and nodes per tenant (`buckets.usage`; tenancy reads it through adapters/usage-reader.ts). */
export interface UsageStore {
  /** Adds a cluster of `nodes` nodes, or 409 when the tenant's quotas would be exceeded (domain/quota.ts). */
  reserve(tenant: Tenant, nodes: number): Promise<void>;
  /** The 409 {@link reserve} would answer now, without reserving anything (a dry run's quota check). */
  check(tenant: Tenant, nodes: number): Promise<void>;
  /** Takes a cluster of `nodes` nodes back out. */
  release(tenant: string, nodes: number): Promise<void>;
  /** Adds `nodes` nodes of a live cluster, or 409 when the tenant's maxNodes would be exceeded. */
  reserveNodes(tenant: Tenant, nodes: number): Promise<void>;
  /** The 409 {@link reserveNodes} would answer now (a dry run's quota check). */
  checkNodes(tenant: Tenant, nodes: number): Promise<void>;
  /** Takes `nodes` nodes of a live cluster back out. */
  releaseNodes(tenant: string, nodes: number): Promise<void>;
  /** Sets the usage to a recount (repairs a reservation a crash left behind). */
  set(tenant: string, usage: TenantUsage): Promise<void>;
  get(tenant: string): Promise<TenantUsage>;
  /** Forgets a deleted tenant's usage. */
  remove(tenant: string): Promise<void>;
}

interface Reservation extends ReservationRequest {
  resolve(): void;
  reject(err: unknown): void;
}

export async function openUsageStore(nc: NatsConnection): Promise<UsageStore> {
  const kv: KV = await openBucket(nc, buckets.usage);
  const cache = new RevisionCache(1_000);

  // Group commit: one tenant's concurrent creates would queue on its usage key, one write each. While a write
  // is in flight, reservations wait together and the next write decides all of them, in arrival order.
  const waiting = new Map<string, Reservation[]>();
  const writing = new Set<string>();
  const flush = async (name: string): Promise<void> => {
    const batch = waiting.get(name);
    if (writing.has(name) || !batch) return;
    waiting.delete(name);
    writing.add(name);
    let refused = new Map<Reservation, Error>();
    try {
      await modifyValue<TenantUsage>(
        kv,
        kvKey(name),
        (current) => {
          const decided = admitReservations(current?.value ?? NO_USAGE, batch);
          refused = decided.refused;
          return refused.size === batch.length ? { keep: true } : { put: decided.used };
        },
        { cache },
      );
      for (const r of batch) {
        const err = refused.get(r);
        if (err) r.reject(err);
        else r.resolve();
      }
    } catch (err) {
      for (const r of batch) r.reject(err);
    } finally {
      writing.delete(name);
      void flush(name);
    }
  };

  const reserve = (tenant: Tenant, nodes: number, clusters: 0 | 1) =>
    new Promise<void>((resolve, reject) => {
      const list = waiting.get(tenant.name) ?? [];
      list.push({ tenant, nodes, clusters, resolve, reject });
      waiting.set(tenant.name, list);
      void flush(tenant.name);
    });
  const check = async (tenant: Tenant, nodes: number, clusters: 0 | 1) => {
    const refusal = quotaRefusal(tenant, await readUsage(kv, tenant.name), nodes, clusters);
    if (refusal) throw refusal;
  };
  const release = async (tenant: string, nodes: number, clusters: 0 | 1) => {
    await modifyValue<TenantUsage>(kv, kvKey(tenant), (current) => {
      // Nothing to take back from a usage already forgotten (its tenant was deleted meanwhile).
      if (!current) return { keep: true };
      return { put: withoutCluster(current.value, nodes, clusters) };
    }, { cache });
  };

  return {
    reserve: (tenant, nodes) => reserve(tenant, nodes, 1),
    check: (tenant, nodes) => check(tenant, nodes, 1),
    release: (tenant, nodes) => release(tenant, nodes, 1),
    reserveNodes: (tenant, nodes) => reserve(tenant, nodes, 0),
    checkNodes: (tenant, nodes) => check(tenant, nodes, 0),
    releaseNodes: (tenant, nodes) => release(tenant, nodes, 0),
    async set(tenant, usage) {
      await modifyValue<TenantUsage>(kv, kvKey(tenant), (current) =>
        current && current.value.clusters === usage.clusters && current.value.nodes === usage.nodes
          ? { keep: true }
          : { put: usage },
        { cache },
      );
    },
    get: (tenant) => readUsage(kv, tenant),
    async remove(tenant) {
      cache.forget(kvKey(tenant));
      await kv.purge(kvKey(tenant));
    },
  };
}
