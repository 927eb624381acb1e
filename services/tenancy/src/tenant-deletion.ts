import { randomUUID } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  SUPERADMIN_TENANT,
  type TenantDeletion,
} from "@corral/contracts";
import { callEndpoint, sleep, type Logger } from "@corral/shared";
import type { HostPoolStore } from "./adapters/hostpool-store.js";
import type { TenantRecord, TenantStore } from "./adapters/tenant-store.js";
import type { UsageReader } from "@corral/clusters/readers";
import type { CatalogReplacer } from "./catalog-replacer.js";

export interface TenantDeletionDeps {
  tenants: TenantStore;
  usage: UsageReader;
  replacer: CatalogReplacer;
  hostPool: HostPoolStore;
  /** For the purge requests to the services that own the rest of a tenant's state. */
  nc: NatsConnection;
  log: Logger;
  now: () => number;
  /** A deletion whose worker has not renewed its claim for this long is taken over by any instance. @default 30000 */
  takeoverAfterMs?: number;
  /** How long DELETE waits for the purge before it answers (the purge goes on). @default 5000 */
  answerWithinMs?: number;
}

/**
 * Deleting a tenant so that nothing of it reaches a later tenant of the same name, whatever crashes:
 *
 * 1. the record becomes a tombstone (`deleting`): the tenant no longer exists for anyone, cluster creates are
 *    refused, the name cannot be created again;
 * 2. the live clusters are counted (cluster creates reserve usage before they check the tenant again, so one the
 *    count misses sees the tombstone): with any, the tenant is restored and the delete is a 409; without, the
 *    deletion is committed;
 * 3. every owner purges its part, idempotently: clusters (clusters, nodes, plans, credentials, task queue,
 *    results, events, usage, cluster keys), node usage (metrics), hostpool allocations, plugin resources, catalog;
 * 4. once all of them succeeded, the tombstone is removed.
 *
 * The worker renews its claim before each step; any instance finishes a deletion whose worker went quiet.
 */
export interface TenantDeletions {
  /** DELETE /tenants/{name}: 403 superadmin, 404 unknown, 409 workers or live clusters or an import running. */
  delete(name: string): Promise<void>;
  /** Before the name is created again: finishes its deletion, or 409 when that cannot be done now. */
  clear(name: string): Promise<void>;
  /** Finishes deletions whose worker stopped (a crash, a service that was down). */
  sweep(): Promise<void>;
  /** Waits for the deletions this instance is running. */
  stop(): Promise<void>;
}

/** Calls to other services stay well below the takeover age, so a step never outlives its claim. */
const STEP_TIMEOUT_MS = 20_000;
const RECOUNT_AFTER_MS = 250;

type Claim = { kind: "mine"; record: TenantRecord } | { kind: "busy" } | { kind: "gone" };

class StillDeletingError extends ConflictError {
  constructor(name: string, reason: string) {
    super(`tenant ${name} is still being deleted (${reason}); try again later`, undefined, "still_deleting");
  }
}

export function createTenantDeletions(deps: TenantDeletionDeps): TenantDeletions {
  const { tenants, usage, replacer, hostPool, nc, log, now } = deps;
  const takeoverAfterMs = deps.takeoverAfterMs ?? 30_000;
  const answerWithinMs = deps.answerWithinMs ?? 5_000;
  const running = new Map<string, Promise<void>>();

  const purgeSteps: Array<{ what: string; run: (name: string) => Promise<unknown> }> = [
    // Clusters first: it removes the tenant's events, which node usage must not record again after its purge.
    {
      what: "clusters",
      run: async (name) => {
        while (!(await callEndpoint(nc, "clusters.purgeTenant", { tenant: name }, { timeoutMs: STEP_TIMEOUT_MS })).done) {
          await renew(name);
        }
      },
    },
    { what: "node usage", run: (name) => callEndpoint(nc, "metrics.purgeTenant", { tenant: name }, { timeoutMs: STEP_TIMEOUT_MS }) },
    { what: "hostpool allocations", run: (name) => hostPool.purgeTenant(name) },
    { what: "plugin resources", run: (name) => callEndpoint(nc, "plugins.purgeTenant", { tenant: name }, { timeoutMs: STEP_TIMEOUT_MS }) },
    // A tenant made again under the name must not inherit the endpoints (and their secrets) of the deleted one.
    { what: "webhooks", run: (name) => callEndpoint(nc, "webhooks.purgeTenant", { tenant: name }, { timeoutMs: STEP_TIMEOUT_MS }) },
    // Last: a catalog write that passed the gateway just before the tombstone has had the whole purge to land.
    { what: "catalog", run: (name) => replacer.purge(name) },
  ];

  /** Tokens of the runs in this process, by tenant: a renewal checks that the claim is still its own. */
  const tokens = new Map<string, string>();

  const claim = async (name: string, token: string): Promise<Claim> => {
    let outcome: Claim = { kind: "gone" };
    await tenants.modify(name, (current) => {
      const deleting = current?.value.deleting;
      if (!current || !deleting) {
        outcome = { kind: "gone" };
        return { keep: true };
      }
      if (deleting.worker !== token && now() - deleting.heartbeatAt < takeoverAfterMs) {
        outcome = { kind: "busy" };
        return { keep: true };
      }
      const record: TenantRecord = { ...current.value, deleting: { ...deleting, worker: token, heartbeatAt: now() } };
      outcome = { kind: "mine", record };
      return { put: record };
    });
    return outcome;
  };

  async function renew(name: string): Promise<void> {
    if ((await claim(name, tokens.get(name) ?? "")).kind !== "mine") throw new StillDeletingError(name, "another instance took it over");
  }

  /** Changes this run's tombstone; false when the claim is no longer this run's. */
  const changeOwn = async (name: string, token: string, change: (record: TenantRecord, deleting: TenantDeletion) => TenantRecord | "remove") => {
    let done = false;
    await tenants.modify(name, (current) => {
      const deleting = current?.value.deleting;
      done = false;
      if (!current || deleting?.worker !== token) return { keep: true };
      done = true;
      const next = change(current.value, deleting);
      return next === "remove" ? { delete: true } : { put: next };
    });
    return done;
  };

  /** Steps 2 to 4 for a tombstone; throws the 409 of a restore. */
  const finish = async (name: string, token: string): Promise<void> => {
    tokens.set(name, token);
    const claimed = await claim(name, token);
    if (claimed.kind === "gone") return;
    if (claimed.kind === "busy") throw new StillDeletingError(name, "another instance is working on it");
    if (!claimed.record.deleting?.committed) {
      let live = (await usage.get(name)).clusters;
      if (live > 0) {
        // A create that reserved just before the mark and then saw it gives its reservation back within moments.
        await sleep(RECOUNT_AFTER_MS);
        live = (await usage.get(name)).clusters;
      }
      if (live > 0) {
        await changeOwn(name, token, ({ deleting: _restored, ...record }) => record);
        throw new ConflictError(`tenant ${name} has ${live} live clusters; delete them first`, { clusters: live }, "not_deletable");
      }
      if (!(await changeOwn(name, token, (record, deleting) => ({ ...record, deleting: { ...deleting, committed: true } })))) {
        throw new StillDeletingError(name, "another instance took it over");
      }
      log.info("deleting tenant", { tenant: name });
    }
    // Every step is tried even when one fails (a service that is down): what can be purged now is.
    const failed: string[] = [];
    for (const step of purgeSteps) {
      await renew(name);
      await step.run(name).catch((err: unknown) => failed.push(`${step.what}: ${(err as Error).message}`));
    }
    if (failed.length > 0) throw new StillDeletingError(name, `not purged yet: ${failed.join("; ")}`);
    if (!(await changeOwn(name, token, () => "remove"))) throw new StillDeletingError(name, "another instance took it over");
    log.info("tenant deleted and purged", { tenant: name });
  };

  /** One run per tenant in this process; later callers share it. */
  const start = (name: string, token: string = randomUUID()): Promise<void> => {
    let run = running.get(name);
    if (!run) {
      run = finish(name, token)
        .catch(async (err: unknown) => {
          // This run is over: the next one, here or in any instance, need not wait for the takeover age.
          await changeOwn(name, token, (record, deleting) => ({ ...record, deleting: { ...deleting, heartbeatAt: 0 } })).catch(() => {});
          throw err;
        })
        .finally(() => {
          running.delete(name);
          tokens.delete(name);
        });
      running.set(name, run);
    }
    return run;
  };

  const isRestored = (err: unknown) => err instanceof ConflictError && err.code === "not_deletable";
  const logFailure = (name: string) => (err: unknown) => {
    if (isRestored(err)) log.info("tenant delete undone", { tenant: name, reason: (err as Error).message });
    else log.warn("tenant deletion not finished; the sweep tries again", { tenant: name, err });
  };

  /** Step 1. A tombstone already there is a tenant that does not exist (its deletion is moved along). */
  const mark = async (name: string, token: string) => {
    let tombstone = false;
    await tenants.modify(name, (current) => {
      tombstone = current?.value.deleting !== undefined;
      if (!current || tombstone) throw new NotFoundError("tenant", name);
      const { tenant, pendingCatalog, ...rest } = current.value;
      if (tenant.workers > 0) {
        throw new ConflictError(`tenant ${name} still has ${tenant.workers} workers; set workers to 0 before deleting it`, undefined, "not_deletable");
      }
      if (pendingCatalog && now() - pendingCatalog.startedAt < takeoverAfterMs) {
        throw new ConflictError(`a catalog import for tenant ${name} is in progress, try again`);
      }
      // An abandoned import is dropped with the rest: its takeover checks that its mark is still there.
      const deleting: TenantDeletion = { since: now(), committed: false, worker: token, heartbeatAt: now() };
      return { put: { ...rest, tenant, deleting } };
    }).catch((err: unknown) => {
      if (tombstone && !running.has(name)) void start(name).catch(logFailure(name));
      throw err;
    });
  };

  return {
    async delete(name) {
      if (name === SUPERADMIN_TENANT) throw new ForbiddenError("the superadmin tenant cannot be deleted");
      const token = randomUUID();
      await mark(name, token);
      const run = start(name, token);
      let timer: NodeJS.Timeout | undefined;
      try {
        const purged = await Promise.race([
          run.then(() => true),
          new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), answerWithinMs))),
        ]);
        if (!purged) run.catch(logFailure(name));
      } catch (err) {
        // Once committed the tenant is deleted; what is left of it is purged later.
        if (isRestored(err) || !(await tenants.get(name))?.value.deleting?.committed) throw err;
        logFailure(name)(err);
      } finally {
        clearTimeout(timer);
      }
    },

    async clear(name) {
      // A tenant restored (it had live clusters) still exists: the create that asked finds it taken.
      await start(name).catch((err: unknown) => {
        if (!isRestored(err)) throw err;
      });
    },

    async sweep() {
      for (const record of await tenants.list()) {
        const deleting = record.deleting;
        const name = record.tenant.name;
        if (!deleting || running.has(name) || now() - deleting.heartbeatAt < takeoverAfterMs) continue;
        log.info("finishing an interrupted tenant deletion", { tenant: name });
        await start(name).catch(logFailure(name));
      }
    },

    async stop() {
      await Promise.allSettled([...running.values()]);
    },
  };
}
