import { setMaxListeners } from "node:events";
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { resolve } from "node:path";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { PROVISIONER_HEARTBEAT_MS, TASK_ACK_WAIT_MS } from "@corral/contracts";
import {
  installationId,
  openActiveSetReader,
  openClusterRecordReader,
  retryFor,
  retryingOnce,
  type Logger,
  type MetricsRegistry,
} from "@corral/shared";
import { createAssignmentWatcher } from "./assignment-watcher.js";
import { startHealthChecker, type HealthChecker } from "./health/checker.js";
import { checkedTenants } from "./health/checked-tenants.js";
import { createHealthTargetRecorder } from "./health/recorder.js";
import { createHealthTargetStore } from "./health/targets.js";
import { ClusterKeys } from "./cluster-keys.js";
import type { PluginHost } from "./plugin-host.js";
import { loadPluginModules } from "./plugin-modules.js";
import { createPluginSet, type PluginSet } from "./plugin-set.js";
import { bundledPlugins } from "./plugins/index.js";
import type { Plugin } from "./plugins/types.js";
import { createRegistration } from "./registry.js";
import { createResourceSync } from "./resource-sync.js";
import { defaultSandbox, type LocalSandbox } from "./sandbox/index.js";
import { SshPool } from "./ssh/pool.js";
import { startTenantFilesSweeps, type TenantFilesSweeps } from "./tenant-files-sweep.js";
import { registerWorkerGauges } from "./worker-gauges.js";
import { createWorkerPool } from "./worker-pool.js";
import { createTaskFeed, type TaskFeed } from "./task-feed.js";
import { startWorkerLoop } from "./worker-loop.js";
import { createResultBatcher } from "./result-batcher.js";
import { createResultLookup } from "./result-lookup.js";

export interface ProvisionerOptions {
  nc: NatsConnection;
  log: Logger;
  /** Registry id; must be unique among live provisioners. @default `<hostname>-<pid>-<6 hex>` */
  id?: string;
  /** Host written on the record. @default os.hostname() */
  host?: string;
  /** Port written on the record (the provisioner serves nothing; kept for the spec's field). @default 0 */
  port?: number;
  /** Most worker loops this provisioner runs at once, over all tenants. A positive integer. */
  capacity: number;
  /** Root of every tenant's files: node directories, synced plugin resources. */
  workDir: string;
  /** Where actions of `sim` nodes run, one sandbox per tenant (bundled plugins), and whose users synced resources are readable by. @default defaultSandbox() */
  sandbox?: LocalSandbox;
  /** @default bundledPlugins(): providers `sim`, `hostpool`, `docker`, automators `shell` and `chef-solo` */
  plugins?: Plugin[];
  /**
   * Plugin modules to load besides `plugins` (config `provisioner.plugins`): package names, imported as from the
   * provisioner, or paths. A module that cannot be used fails the start (`PluginModuleError`). @default none
   */
  pluginModules?: readonly string[];
  /** Where relative plugin module paths start. @default process.cwd() */
  pluginModulesDir?: string;
  /** The environment plugin modules read their own settings from (`PluginHost.env`). @default {} */
  env?: Readonly<Record<string, string | undefined>>;
  /** Most SSH connections open at once (the pool shared by the bundled plugins and plugin modules). @default 256 */
  maxSshConnections?: number;
  /** The bundled plugins include provider `sim-secured` (ignored with `plugins`). @default false */
  simSecured?: boolean;
  /** Clock for heartbeats and task times, ms. @default Date.now */
  now?: () => number;
  /** @default PROVISIONER_HEARTBEAT_MS (2000) */
  heartbeatMs?: number;
  /** How long one pull for a task waits, ms (at least 1000). @default 10000 */
  pullExpiresMs?: number;
  /** Fallback poll of the assignment key, ms. @default 5000 */
  assignmentPollMs?: number;
  /** How long `stop()` waits for running tasks before killing them and handing them back, ms. @default 60000 */
  stopTimeoutMs?: number;
  /** How long the first registration may keep failing (JetStream not ready yet) before start gives up, ms. @default 30000 */
  startTimeoutMs?: number;
  /** How often the files of tenants that are gone are looked for (also at start and on changes), ms. @default 60000 */
  filesSweepMs?: number;
  /** The process's Prometheus metrics: busy and idle worker loops. @default none */
  metrics?: MetricsRegistry;
  /**
   * Between two rounds of node health checks of the tenants this provisioner checks (config
   * `provisioner.health.intervalMs`), ms; 0 turns the checks off. @default 30000
   */
  healthIntervalMs?: number;
  /** How often every checked node is reported, changed or not, ms. @default max(60000, 10 × healthIntervalMs) */
  healthFullReportMs?: number;
}

/** A running provisioner. */
export interface RunningProvisioner {
  readonly id: string;
  /** tenant -> worker loops running now. */
  usage(): Record<string, number>;
  /** The node health checks of the tenants this provisioner checks (undefined with `healthIntervalMs: 0`). */
  readonly health: Pick<HealthChecker, "runRound" | "checkNow"> | undefined;
  /**
   * Stops pulling, lets running tasks finish (up to `stopTimeoutMs`, then kills them and hands them back), stops
   * heartbeating and removes the record. Idempotent. Leaves the NATS connection open.
   */
  stop(): Promise<void>;
}

/** The default provisioner id: `<short hostname>-<pid>-<6 hex>`. */
export function defaultProvisionerId(): string {
  const host = (hostname().split(".")[0] ?? "host").toLowerCase() || "host";
  return `${host}-${process.pid}-${randomBytes(3).toString("hex")}`;
}

/**
 * Starts a provisioner (docs/architecture.md, Provisioners): registers itself and its plugin specs, heartbeats, follows
 * its part of the worker assignment and runs that many worker loops per tenant, each pulling tasks from the tenant's
 * task consumer, running the plugin, publishing the result and acking.
 */
export async function startProvisioner(options: ProvisionerOptions): Promise<RunningProvisioner> {
  const opts = {
    id: defaultProvisionerId(),
    host: hostname(),
    port: 0,
    now: Date.now,
    heartbeatMs: PROVISIONER_HEARTBEAT_MS,
    pullExpiresMs: 10_000,
    assignmentPollMs: 5_000,
    stopTimeoutMs: 60_000,
    startTimeoutMs: 30_000,
    filesSweepMs: 60_000,
    healthIntervalMs: 30_000,
    ...withoutUndefined(options),
  };
  check(Number.isInteger(opts.capacity) && opts.capacity > 0, "capacity", "must be a positive integer");
  check(typeof opts.workDir === "string" && opts.workDir !== "", "workDir", "is required");
  check(typeof opts.id === "string" && opts.id !== "", "id", "must be a non-empty string");
  check(opts.pullExpiresMs >= 1000, "pullExpiresMs", "must be at least 1000");
  check(Number.isInteger(opts.healthIntervalMs) && opts.healthIntervalMs >= 0, "healthIntervalMs", "must be a whole number of ms, 0 or more");
  const workDir = resolve(opts.workDir);
  const log = opts.log.child({ provisioner: opts.id });
  const sandbox = opts.sandbox ?? defaultSandbox();
  const sshPool = new SshPool({ log, maxConnections: opts.maxSshConnections ?? 256 });
  const clusterKeys = new ClusterKeys(opts.nc);
  const bundled = opts.plugins ?? bundledPlugins({ nc: opts.nc, log, workDir, sshPool, clusterKeys, simSecured: opts.simSecured, sandbox });
  const host: PluginHost = {
    nc: opts.nc,
    log,
    provisionerId: opts.id,
    workDir,
    ssh: { pool: sshPool, credentials: { workDir, clusterKeys } },
    clusterKeys,
    sandbox,
    clusters: retryingOnce(() => openClusterRecordReader(opts.nc)),
    installationId: retryingOnce(() => installationId(opts.nc)),
    env: Object.freeze({ ...(opts.env ?? {}) }),
  };
  // Every module loads before anything is registered: a bad one stops the start with nothing half-announced.
  let plugins: Plugin[] = bundled;
  let pluginSet: PluginSet;
  try {
    const modules = await loadPluginModules({ specifiers: opts.pluginModules ?? [], host, carried: bundled, cwd: opts.pluginModulesDir ?? process.cwd() });
    plugins = [...bundled, ...modules.flatMap((m) => m.plugins)];
    pluginSet = createPluginSet(plugins);
  } catch (err) {
    await closePlugins(plugins, log);
    await sshPool.close();
    throw err;
  }
  const hardStop = new AbortController();
  // Every running task listens for the hard stop: as many listeners as tasks run at once is expected.
  setMaxListeners(0, hardStop.signal);

  /** Removes what tenants that are gone left in the work directory; starts once the first assignment is applied. */
  let sweeps: TenantFilesSweeps | undefined;
  const feeds = new Map<string, TaskFeed>();
  const results = createResultBatcher(opts.nc);
  const healthTargets = createHealthTargetStore(opts.nc, log);
  const recorder = createHealthTargetRecorder(pluginSet, healthTargets, log);
  let jsm: Promise<JetStreamManager> | undefined;
  const lookup = createResultLookup(() => (jsm ??= jetstreamManager(opts.nc)));
  const feedFor = (tenant: string) => {
    let feed = feeds.get(tenant);
    if (!feed) feeds.set(tenant, (feed = createTaskFeed({ nc: opts.nc, tenant, log, pullExpiresMs: opts.pullExpiresMs })));
    return feed;
  };

  const pool = createWorkerPool({
    capacity: opts.capacity,
    log,
    onChange: () => {
      registration.touch();
      sweeps?.request();
    },
    startLoop: (tenant, workerId) =>
      startWorkerLoop({
        tenant,
        provisionerId: opts.id,
        workerId,
        plugins: pluginSet,
        workDir,
        log,
        now: opts.now,
        feed: feedFor(tenant),
        results,
        lookup,
        progressMs: TASK_ACK_WAIT_MS / 3,
        hardStop: hardStop.signal,
        afterTask: recorder.afterTask,
      }),
  });
  if (opts.metrics) registerWorkerGauges(opts.metrics, pool, opts.capacity);
  const registration = createRegistration({
    nc: opts.nc,
    log,
    id: opts.id,
    host: opts.host,
    port: opts.port,
    capacity: opts.capacity,
    plugins,
    usage: () => pool.usage(),
    now: opts.now,
    heartbeatMs: opts.heartbeatMs,
  });
  const resources = createResourceSync({ nc: opts.nc, log, workDir, now: opts.now, sandbox, onUnfollowedChange: () => sweeps?.request() });
  let applying: Promise<void> = Promise.resolve();
  let isStopping = false;
  /** The tenants of the assignment applied last (followed by the resource sync). */
  let followed: ReadonlySet<string> = new Set();
  /** Plugin resources first (bounded wait), so a tenant's first tasks already see its synced resources. */
  const applyAssignment = (mine: Record<string, number>) => {
    applying = applying.then(async () => {
      followed = new Set(Object.keys(mine));
      await resources.follow(Object.keys(mine)).catch((err: unknown) => log.warn("following plugin resources failed", { err }));
      if (!isStopping) pool.apply(mine);
    });
  };
  const watcher = createAssignmentWatcher({
    nc: opts.nc,
    log,
    id: opts.id,
    pollMs: opts.assignmentPollMs,
    onChange: applyAssignment,
  });

  await withinStartTimeout(() => registration.start(), opts.startTimeoutMs, log, "registering");
  try {
    await withinStartTimeout(() => watcher.start(), opts.startTimeoutMs, log, "reading the assignment");
    await applying;
  } catch (err) {
    await resources.stop();
    await registration.stop();
    await closePlugins(plugins, log);
    await sshPool.close();
    throw err;
  }
  const isolation = await sandbox.isolation();
  sweeps = startTenantFilesSweeps({
    workDir,
    log,
    sandbox,
    clusters: () => openClusterRecordReader(opts.nc),
    activeSets: () => openActiveSetReader(opts.nc),
    isBusy: (tenant) =>
      followed.has(tenant) || watcher.assignedAnywhere().has(tenant) || (pool.usage()[tenant] ?? 0) > 0 || resources.installing(tenant),
    intervalMs: opts.filesSweepMs,
    // In turn with assignment changes: no tenant's work starts while a sweep decides on its files.
    inTurn: (sweep) => (applying = applying.then(sweep, sweep)),
  });
  const health: HealthChecker | undefined =
    opts.healthIntervalMs > 0
      ? startHealthChecker({
          nc: opts.nc,
          log,
          provisionerId: opts.id,
          workDir,
          plugins: pluginSet,
          store: healthTargets,
          tenants: () => checkedTenants(watcher.assignment(), opts.id),
          clusters: host.clusters,
          intervalMs: opts.healthIntervalMs,
          ...(opts.healthFullReportMs !== undefined ? { fullReportMs: opts.healthFullReportMs } : {}),
        })
      : undefined;
  log.info("provisioner started", { capacity: opts.capacity, workDir, plugins: pluginSet.names, sandbox: isolation });
  if (isolation.mode === "unsandboxed") {
    log.warn("local actions (sim nodes) cannot be sandboxed here: not root, and no user namespaces; only one tenant may run them");
  }

  let stopping: Promise<void> | undefined;
  return {
    id: opts.id,
    usage: () => pool.usage(),
    health,
    stop() {
      stopping ??= (async () => {
        log.info("stopping: no new tasks; waiting for running ones", { usage: pool.usage() });
        isStopping = true;
        await health?.stop();
        await watcher.stop();
        await sweeps?.stop();
        await resources.stop();
        await applying;
        const drained = pool.stopAll();
        const timer = setTimeout(() => {
          log.warn("running tasks did not finish in time; killing them and handing them back", {
            stopTimeoutMs: opts.stopTimeoutMs,
          });
          hardStop.abort(new Error("provisioner stopped"));
        }, opts.stopTimeoutMs);
        await drained;
        clearTimeout(timer);
        // Pull requests still at the server lose their listener and are dropped there.
        for (const feed of feeds.values()) feed.close();
        await registration.stop();
        await closePlugins(plugins, log);
        await sshPool.close();
        log.info("provisioner stopped");
      })();
      return stopping;
    },
  };
}

/** Retries `fn` until it succeeds or `timeoutMs` passed; then rethrows its last error. */
function withinStartTimeout(fn: () => Promise<void>, timeoutMs: number, log: Logger, what: string): Promise<void> {
  return retryFor(fn, { forMs: timeoutMs, onRetry: (err, attempt) => log.warn(`${what} failed; retrying`, { err, attempt }) });
}

/** Stops what plugins run in the background (reconcilers, SSH connections). */
async function closePlugins(plugins: readonly Plugin[], log: Logger): Promise<void> {
  await Promise.all(
    plugins.map((p) => p.close?.().catch((err: unknown) => log.warn("closing a plugin failed", { plugin: p.spec.name, err }))),
  );
}

function check(ok: boolean, field: string, what: string): void {
  if (!ok) throw new TypeError(`startProvisioner: ${field} ${what}`);
}

function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
