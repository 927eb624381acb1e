import type { NatsConnection } from "@nats-io/transport-node";
import type { ClusterRecordReader, Logger } from "@corral/shared";
import type { ClusterKeys } from "./cluster-keys.js";
import type { LocalSandbox } from "./sandbox/index.js";
import type { RemoteAccess } from "./ssh/remote-node.js";
import type { Plugin } from "./plugins/types.js";

/**
 * What a provisioner hands each plugin factory of a plugin module (`provisioner.plugins`): the shared resources a
 * plugin would otherwise have to build itself. One host serves every module of the provisioner.
 */
export interface PluginHost {
  /** The provisioner's NATS connection (its user may use the provisioner's KV buckets, never service subjects). */
  nc: NatsConnection;
  /** The provisioner's logger, with `pluginModule` set to the module's specifier. */
  log: Logger;
  provisionerId: string;
  /** Root of every tenant's files on this host (`tenantDir`, `nodeDir`, `resourceDir` lay it out). */
  workDir: string;
  /**
   * The provisioner's SSH pool and where credentials come from: pass it to `withRemoteNode`, `nodeTarget`,
   * `awaitSsh`. The provisioner closes the pool after every plugin's `close`.
   */
  ssh: RemoteAccess;
  /** Per-cluster SSH key pairs (bucket `corral_cluster_keys`), shared with the automators' `ssh-auth: {cluster_key}`. */
  clusterKeys: ClusterKeys;
  /** The per-tenant sandbox of local actions (nodes of providers declaring `capabilities.localActions`). */
  sandbox: LocalSandbox;
  /** The cluster records a provisioner may read (tenant and status), for orphan sweeps (`orphanReason`). */
  clusters(): Promise<ClusterRecordReader>;
  /** This installation's id (stable across restarts): tag what you create with it, sweep only what carries it. */
  installationId(): Promise<string>;
  /**
   * The environment the provisioner was started with (`process.env` for the process), for a plugin's own settings;
   * name your variables after your plugin (`CORRAL_EC2_...`). Never handed to actions.
   */
  env: Readonly<Record<string, string | undefined>>;
}

/** Makes one plugin for a provisioner; may be async (open a client, read settings). A throw stops the provisioner's start. */
export type PluginFactory = (host: PluginHost) => Plugin | Promise<Plugin>;

/**
 * The shape of a plugin module named in `provisioner.plugins`: a default export or a named export `plugins`, an
 * array of plugin factories (an empty array is valid: the module contributes nothing).
 */
export interface PluginModule {
  default?: readonly PluginFactory[];
  plugins?: readonly PluginFactory[];
}
