import {
  every,
  retryingOnce,
  type ClusterKeys,
  type ClusterRecordReader,
  type Logger,
  type PluginContext,
  type PluginFactory,
  type PluginOutcome,
  type ProviderPlugin,
  type SshPool,
} from "@corral/provisioner/sdk";
import { confirmNode } from "./confirm.js";
import { createNode } from "./create.js";
import { deleteNode } from "./delete.js";
import { lxdHealth } from "./health.js";
import type { LxdDeps } from "./instances.js";
import { LxdClient, LxdError, LxdUnreachableError } from "./lxd-api.js";
import { clientKey, defaultSocketPath, type LxdSettings } from "./settings.js";
import { LXD_SPEC } from "./spec.js";
import { sweepLxdOrphans } from "./sweep.js";

export { LXD_SPEC, LXD_PROVIDER_TYPE } from "./spec.js";
export { LxdClient, LxdError, LxdApiError, LxdOperationError, LxdUnreachableError, LxdTimeoutError, isLxdStatus } from "./lxd-api.js";
export type { Instance, InstanceState, LxdEndpoint, Operation } from "./lxd-api.js";
export { CONFIG, MANAGED_BY, instanceName } from "./naming.js";
export { DEFAULT_IMAGE, defaultSocketPath, lxdSettings } from "./settings.js";
export { flavorLimits } from "./limits.js";
export { userData } from "./cloud-init.js";
export { sweepLxdOrphans, type LxdSweepOptions } from "./sweep.js";

export interface LxdProviderOptions {
  /** The provisioner's SSH pool (CONFIRM's wait for sshd). */
  pool: SshPool;
  clusterKeys: ClusterKeys;
  log: Logger;
  clusters(): Promise<ClusterRecordReader>;
  installationId(): Promise<string>;
  /** Socket of providers without `socket_path` or `url`. @default {@link defaultSocketPath} */
  socketPath?: string;
  /** Between two orphan sweeps, ms; 0 turns them off. @default 60000 */
  reconcileIntervalMs?: number;
  /** An instance whose cluster is unknown is removed only when older than this, ms. @default 600000 */
  orphanGraceMs?: number;
  /** How long CONFIRM waits for the instance, its host keys and its sshd, ms. @default 300000 */
  confirmTimeoutMs?: number;
}

/**
 * The `lxd` provider: nodes are LXD system containers (or VMs) made from an image alias or fingerprint, reached over
 * SSH with the cluster's key pair. Besides the tasks it sweeps orphans (instances of clusters Corral no longer knows)
 * of every LXD endpoint and project it has served, and of the local one.
 */
export function createLxdProvider(options: LxdProviderOptions): ProviderPlugin {
  const { log } = options;
  const defaultSocket = options.socketPath ?? defaultSocketPath();
  const clients = new Map<string, LxdClient>();
  const client = (settings: Pick<LxdSettings, "endpoint" | "project">) => {
    const key = clientKey(settings);
    let made = clients.get(key);
    if (!made) clients.set(key, (made = new LxdClient({ endpoint: settings.endpoint, project: settings.project })));
    return made;
  };
  client({ endpoint: { kind: "unix", socketPath: defaultSocket }, project: "default" });
  const installation = retryingOnce(() => options.installationId());
  const clusters = retryingOnce(() => options.clusters());
  const depsNow = async (): Promise<LxdDeps> => ({ client, clusterKeys: options.clusterKeys, installation: await installation() });

  const sweep = async () => {
    for (const lxd of clients.values()) {
      try {
        const report = await sweepLxdOrphans({
          lxd,
          clusters: await clusters(),
          clusterKeys: options.clusterKeys,
          installation: await installation(),
          log,
          orphanGraceMs: options.orphanGraceMs ?? 600_000,
        });
        if (report.removed.length) log.info("lxd: orphan sweep done", { lxd: lxd.where, ...report });
      } catch (err) {
        // A host without LXD is normal for the local socket; say it quietly.
        const level = err instanceof LxdUnreachableError ? "debug" : "warn";
        log[level]("lxd: orphan sweep failed", { lxd: lxd.where, error: String(err) });
      }
    }
  };
  const interval = options.reconcileIntervalMs ?? 60_000;
  const sweeper = interval > 0 ? every(interval, sweep) : undefined;

  const guarded =
    (op: (ctx: PluginContext, deps: LxdDeps) => Promise<PluginOutcome>) =>
    async (ctx: PluginContext): Promise<PluginOutcome> => {
      try {
        return await op(ctx, await depsNow());
      } catch (err) {
        if (err instanceof LxdError && !ctx.signal.aborted) return { status: 1, stderr: `${err.message}\n` };
        throw err;
      }
    };

  return {
    kind: "providertypes",
    spec: LXD_SPEC,
    create: guarded((ctx, deps) => createNode(ctx, deps, defaultSocket)),
    confirm: guarded((ctx, deps) => confirmNode(ctx, deps, options.pool, defaultSocket, options.confirmTimeoutMs ?? 300_000)),
    delete: guarded((ctx, deps) => deleteNode(ctx, deps, defaultSocket)),
    health: lxdHealth(depsNow, defaultSocket),
    async close() {
      await sweeper?.stop();
      for (const lxd of clients.values()) lxd.close();
    },
  };
}

/** A positive integer from the environment, else the default. */
function envMs(env: Readonly<Record<string, string | undefined>>, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name}=${raw} is not a whole number of milliseconds`);
  return value;
}

/**
 * The provider for a provisioner: its SSH pool, cluster keys, cluster records and installation id, and settings
 * from the provisioner's environment: `CORRAL_LXD_SWEEP_INTERVAL_MS` (0 turns sweeps off),
 * `CORRAL_LXD_ORPHAN_GRACE_MS`, `CORRAL_LXD_CONFIRM_TIMEOUT_MS`, and `LXD_SOCKET` or `LXD_DIR` for the local socket.
 */
export const lxdProvider: PluginFactory = (host) => {
  const reconcileIntervalMs = envMs(host.env, "CORRAL_LXD_SWEEP_INTERVAL_MS");
  const orphanGraceMs = envMs(host.env, "CORRAL_LXD_ORPHAN_GRACE_MS");
  const confirmTimeoutMs = envMs(host.env, "CORRAL_LXD_CONFIRM_TIMEOUT_MS");
  return createLxdProvider({
    pool: host.ssh.pool,
    clusterKeys: host.clusterKeys,
    log: host.log,
    clusters: () => host.clusters(),
    installationId: () => host.installationId(),
    socketPath: defaultSocketPath(host.env),
    ...(reconcileIntervalMs !== undefined ? { reconcileIntervalMs } : {}),
    ...(orphanGraceMs !== undefined ? { orphanGraceMs } : {}),
    ...(confirmTimeoutMs !== undefined ? { confirmTimeoutMs } : {}),
  });
};

/** The module's plugin factories (`provisioner.plugins`). */
const plugins: readonly PluginFactory[] = [lxdProvider];
export default plugins;
