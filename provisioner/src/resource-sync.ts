import type { NatsConnection } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import type { ObjectStore } from "@nats-io/obj";
import { objectStores } from "@corral/contracts";
import { backoffMs, followWatch, openActiveSetReader, openObjectStore, type ActiveSetReader, type Logger } from "@corral/shared";
import { downloadObject } from "./resource-fetch.js";
import { installResources, type DesiredResource, type ResourceKind } from "./resource-install.js";
import { defaultSandbox, type LocalSandbox } from "./sandbox/index.js";

/**
 * An `ActiveSet` (shared/src/active-sets.ts) as read: defensively, every field may be missing or of another
 * type, and unknown fields are ignored.
 */
interface ActiveSetPayload {
  generation?: number;
  automatortypes?: Record<string, Record<string, ActiveTypePayload>>;
  providertypes?: Record<string, Record<string, ActiveTypePayload>>;
}
interface ActiveTypePayload {
  format?: string;
  permissions?: string;
  active?: Array<{ name?: unknown; version?: unknown; object?: unknown; format?: unknown }>;
}

export interface ResourceSyncOptions {
  nc: NatsConnection;
  log: Logger;
  workDir: string;
  now: () => number;
  /** Fallback re-read of every followed tenant's set, ms. @default 30000 */
  pollMs?: number;
  /** How long `follow` waits for a new tenant's first install before letting its workers start anyway, ms. @default 15000 */
  firstSyncWaitMs?: number;
  /** How long replaced versions stay on disk for tasks still reading them, ms. @default 600000 */
  retainMs?: number;
  /** Whose actions must be able to read a tenant's resources. @default defaultSandbox() */
  sandbox?: LocalSandbox;
  /** Called when the set of a tenant this provisioner does not follow changes (a purge empties a deleted tenant's). */
  onUnfollowedChange?: (tenant: string) => void;
}

/** Keeps the installed plugin resources of the tenants this provisioner works for equal to their active sets. */
export interface ResourceSync {
  /**
   * Follows exactly these tenants from now on. Resolves once every newly followed tenant's resources were
   * installed (or the first attempt failed, or `firstSyncWaitMs` passed), so its workers start with them.
   */
  follow(tenants: readonly string[]): Promise<void>;
  /** Whether an install of the tenant's resources is running now (followed or no longer). */
  installing(tenant: string): boolean;
  stop(): Promise<void>;
}

interface TenantState {
  running?: Promise<void>;
  again: boolean;
  /** Generation last installed completely; a failed install leaves it so the poll retries. */
  installed?: number;
  failures: number;
  retry?: NodeJS.Timeout;
}

/**
 * Watches the published active sets (shared/src/active-sets.ts) and installs each followed tenant's set under the work directory
 * (resource-install.ts): downloads stream from the object store `objectStores.pluginResources`. Installs of one tenant
 * run one at a time; a change during an install runs another afterwards; a failed install is retried with backoff.
 */
export function createResourceSync(options: ResourceSyncOptions): ResourceSync {
  const { nc, log } = options;
  const pollMs = options.pollMs ?? 30_000;
  const firstSyncWaitMs = options.firstSyncWaitMs ?? 15_000;
  const retainMs = options.retainMs ?? 600_000;
  const sandbox = options.sandbox ?? defaultSandbox();
  const stopping = new AbortController();
  const followed = new Map<string, TenantState>();
  const installing = new Map<string, number>();
  const js = jetstream(nc);
  let activeSets: ActiveSetReader | undefined;
  let store: ObjectStore | undefined;
  let watching: Promise<void> | undefined;
  let pollTimer: NodeJS.Timeout | undefined;

  const reader = async () => (activeSets ??= await openActiveSetReader(nc));
  const objects = async () => (store ??= await openObjectStore(nc, objectStores.pluginResources));

  const installOnce = async (tenant: string, state: TenantState): Promise<void> => {
    const payload = (await (await reader()).get(tenant)) as ActiveSetPayload | undefined;
    const generation = payload?.generation ?? 0;
    if (state.installed === generation && generation !== 0) return;
    const desired = desiredOf(payload, log);
    const os = await objects();
    const report = await installResources(
      {
        workDir: options.workDir,
        tenant,
        log,
        now: options.now,
        retainMs,
        fetch: (object, file) => downloadObject(js, os, object, file),
        shareWithTenant: await sandbox.forResources(options.workDir, tenant),
      },
      desired,
    );
    state.installed = generation;
    if (report.downloaded || report.switched || report.removed) {
      log.info("plugin resources installed", { tenant, generation, resources: desired.length, ...report });
    }
  };

  /** Runs an install now, or once more after the running one. */
  const schedule = (tenant: string): Promise<void> => {
    const state = followed.get(tenant);
    if (!state || stopping.signal.aborted) return Promise.resolve();
    if (state.running) {
      state.again = true;
      return state.running;
    }
    clearTimeout(state.retry);
    installing.set(tenant, (installing.get(tenant) ?? 0) + 1);
    state.running = (async () => {
      do {
        state.again = false;
        try {
          await installOnce(tenant, state);
          state.failures = 0;
        } catch (err) {
          state.installed = undefined;
          state.failures++;
          log.warn("plugin resource sync failed; retrying", { tenant, attempt: state.failures, err });
          activeSets = undefined;
          store = undefined;
          if (!stopping.signal.aborted && followed.get(tenant) === state) {
            state.retry = setTimeout(() => void schedule(tenant), backoffMs(state.failures, 500, 30_000));
          }
        }
      } while (state.again && !stopping.signal.aborted && followed.get(tenant) === state);
    })().finally(() => {
      state.running = undefined;
      const left = (installing.get(tenant) ?? 1) - 1;
      if (left > 0) installing.set(tenant, left);
      else installing.delete(tenant);
    });
    return state.running;
  };

  const watchLoop = () =>
    followWatch({
      open: async () => (await reader()).watch(),
      onItem: (tenant) => {
        if (followed.has(tenant)) void schedule(tenant);
        else options.onUnfollowedChange?.(tenant);
      },
      onError: (err) => log.warn("plugin resource watch failed; watching again", { err }),
      onEnd: () => (activeSets = undefined),
      signal: stopping.signal,
    });

  return {
    async follow(tenants) {
      if (stopping.signal.aborted) return;
      const wanted = new Set(tenants);
      for (const [tenant, state] of followed) {
        if (!wanted.has(tenant)) {
          clearTimeout(state.retry);
          followed.delete(tenant); // files stay: they are correct until the next sync, and a returning tenant reuses them
        }
      }
      const first: Array<Promise<void>> = [];
      for (const tenant of wanted) {
        if (followed.has(tenant)) continue;
        followed.set(tenant, { again: false, failures: 0 });
        first.push(schedule(tenant));
      }
      if (!watching) {
        watching = watchLoop();
        pollTimer = setInterval(() => {
          for (const tenant of followed.keys()) void schedule(tenant);
        }, pollMs);
        pollTimer.unref();
      }
      if (first.length === 0) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(first),
        new Promise<void>((r) => (timer = setTimeout(r, firstSyncWaitMs))),
        new Promise<void>((r) => stopping.signal.addEventListener("abort", () => r(), { once: true })),
      ]);
      clearTimeout(timer);
    },
    installing: (tenant) => installing.has(tenant),
    async stop() {
      stopping.abort();
      clearInterval(pollTimer);
      for (const state of followed.values()) clearTimeout(state.retry);
      await watching;
      await Promise.allSettled([...followed.values()].map((s) => s.running));
    },
  };
}

/** How many resource versions a tenant's published set (as `ActiveSetReader.get` answers) makes active. */
export function activeResourceCount(set: unknown, log: Logger): number {
  return desiredOf(set as ActiveSetPayload | undefined, log).length;
}

/** Flattens a published set into the versions to install; malformed entries are logged and skipped. */
function desiredOf(payload: ActiveSetPayload | undefined, log: Logger): DesiredResource[] {
  const out: DesiredResource[] = [];
  if (!payload || typeof payload !== "object") return out;
  for (const kind of ["automatortypes", "providertypes"] as const satisfies readonly ResourceKind[]) {
    for (const [plugin, types] of Object.entries(payload[kind] ?? {})) {
      for (const [resourceType, type] of Object.entries(types ?? {})) {
        for (const a of type?.active ?? []) {
          const format = a.format === "archive" || a.format === "file" ? a.format : type.format;
          if (
            typeof a.name !== "string" ||
            typeof a.object !== "string" ||
            typeof a.version !== "number" ||
            !Number.isSafeInteger(a.version) ||
            (format !== "file" && format !== "archive")
          ) {
            log.warn("skipping a malformed entry of the active resource set", { kind, plugin, resourceType, entry: a });
            continue;
          }
          const d: DesiredResource = { kind, plugin, resourceType, name: a.name, version: a.version, object: a.object, format };
          if (format === "file" && typeof type.permissions === "string") d.permissions = type.permissions;
          out.push(d);
        }
      }
    }
  }
  return out;
}
