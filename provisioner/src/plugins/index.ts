import type { NatsConnection } from "@nats-io/transport-node";
import { silentLogger, type Logger } from "@corral/shared";
import { ClusterKeys } from "../cluster-keys.js";
import { SshPool } from "../ssh/pool.js";
import type { RemoteAccess } from "../ssh/remote-node.js";
import { createAnsibleAutomator } from "./ansible/index.js";
import { createChefSoloAutomator } from "./chef-solo.js";
import { createDockerProvider } from "./docker/index.js";
import { createHostpoolProvider } from "./hostpool/index.js";
import { createShellAutomator } from "./shell.js";
import { createSimProvider, SIM_SECURED_SPEC } from "./sim.js";
import type { LocalSandbox } from "../sandbox/index.js";
import type { Plugin } from "./types.js";

/** What the bundled plugins share within one provisioner. */
export interface BundledPluginsOptions {
  /** Without a connection, only the plugins that need no KV are bundled (`sim`, `shell`, `chef-solo`, `ansible`). */
  nc?: NatsConnection;
  log?: Logger;
  workDir?: string;
  /** Most SSH connections open at once (without `sshPool`). @default 256 */
  maxSshConnections?: number;
  /** The SSH pool to share (the provisioner's, also handed to plugin modules). @default a new pool */
  sshPool?: SshPool;
  /** The per-cluster key pairs to share. @default new ClusterKeys(nc) */
  clusterKeys?: ClusterKeys;
  /** Options of the `docker` provider's orphan sweeps. */
  docker?: { reconcileIntervalMs?: number; orphanGraceMs?: number };
  /** Where `shell` and `chef-solo` run actions of `sim` nodes, and `ansible` runs every play. @default defaultSandbox() */
  sandbox?: LocalSandbox;
  /** Also carry provider `sim-secured` (`sim` with a required password field, for tests). @default false */
  simSecured?: boolean;
}

/**
 * The plugins a provisioner carries unless told otherwise: providers `sim` (and, with a NATS connection,
 * `hostpool` and `docker`; `sim-secured` when asked), automators `shell`, `chef-solo` and `ansible`. Automators run actions of
 * real machines over one shared SSH pool, which every plugin using it closes in its `close` (closing is idempotent);
 * `ansible` runs ansible-playbook, whose own ssh reaches the node.
 */
export function bundledPlugins(options: BundledPluginsOptions = {}): Plugin[] {
  const pool = options.sshPool ?? new SshPool({ log: options.log ?? silentLogger, maxConnections: options.maxSshConnections ?? 256 });
  const clusterKeys = options.clusterKeys ?? (options.nc ? new ClusterKeys(options.nc) : undefined);
  const access: RemoteAccess = { pool, credentials: { workDir: options.workDir ?? "", clusterKeys } };
  const automators = { remote: access, sandbox: options.sandbox };
  const plugins: Plugin[] = [
    createSimProvider(),
    createShellAutomator(automators),
    createChefSoloAutomator(automators),
    createAnsibleAutomator(automators),
  ];
  if (options.simSecured) plugins.push(createSimProvider({ spec: SIM_SECURED_SPEC }));
  if (options.nc && clusterKeys) {
    const log = options.log ?? silentLogger;
    plugins.push(
      createHostpoolProvider({ access, nc: options.nc, log }),
      createDockerProvider({ access, nc: options.nc, log, clusterKeys, ...options.docker }),
    );
  }
  return plugins;
}
