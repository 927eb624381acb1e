/**
 * `@corral/provisioner/sdk`: everything a provider or automator plugin needs, without a deep import into `src/`.
 * A plugin module (named in `provisioner.plugins`) exports plugin factories; each gets a `PluginHost` and returns a
 * `ProviderPlugin` or `AutomatorPlugin`. See provisioner/README.md, "Writing a plugin". Explicit exports only.
 */

// ---- Plugin types --------------------------------------------------------------------------------------------
/** The plugin interface: a plugin is its spec and the operations of its kind; one instance serves every task. */
export type { Plugin, ProviderPlugin, AutomatorPlugin, PluginContext, PluginOutcome, ServiceActionCall } from "./plugins/types.js";
/** A provider's node health checks (`ProviderPlugin.health`): what a check gets, and what a node and its finding are. */
export type { ProviderHealth, HealthCheckContext } from "./plugins/types.js";
export type { HealthTarget, NodeHealthCheck, NodeHealthState } from "@corral/contracts";
/** Health checks batched by the API client a node's provider settings make (endpoint, region, account). */
export { healthBySettings } from "./plugins/health-by-settings.js";
export type { HealthBySettingsOptions, SettingsReading } from "./plugins/health-by-settings.js";
/** What a factory gets (shared NATS connection, SSH pool, cluster keys, sandbox, ...), the factory, a module's shape. */
export type { PluginHost, PluginFactory, PluginModule } from "./plugin-host.js";
/** Types plugins meet in `ctx.task` and in their specs (from @corral/shared and @corral/contracts). */
export type { Logger, ClusterRecordReader } from "@corral/shared";
export type {
  TaskMessage,
  TaskOutcome,
  PluginSpec,
  PluginCapabilities,
  PluginField,
  PluginParameterSet,
  Json,
  JsonObject,
  ClusterRecordHead,
} from "@corral/contracts";
/** Whether the task's node runs its actions on the provisioner host: its provider declares `capabilities.localActions`. */
export { runsActionsLocally } from "./plugins/local-actions.js";
export type { NatsConnection } from "@nats-io/transport-node";

// ---- SSH toolkit ---------------------------------------------------------------------------------------------
/** Pooled SSH connections with host-key pinning; `learnHostKey` is the only unpinned connection (CONFIRM). */
export { SshPool, SshError } from "./ssh/pool.js";
export type { SshTarget, SshLease, SshErrorKind, SshPoolOptions } from "./ssh/pool.js";
/** Runs `fn` against the task's node (address, credential, pinned key from the task); SSH failures become outcomes. */
export { withRemoteNode, withTarget } from "./ssh/remote-node.js";
export type { RemoteNode, RemoteAccess } from "./ssh/remote-node.js";
/** Where automators keep files on a node: `/var/lib/corral/{work,run,resources/<automator>/<type>}`. */
export { REMOTE_ROOT, REMOTE_WORK_DIR, REMOTE_RUN_DIR, prepareWorkDirs, remoteResourceDir } from "./ssh/remote-node.js";
/** A task's node as an SSH target; `ssh-auth` parsing and the secret it names (cluster key, resource, field). */
export { nodeTarget, sshCredential, parseSshAuth, sshKeyFile } from "./ssh/node-target.js";
export type { SshAuth, CredentialSources, NodeTarget, SshCredential } from "./ssh/node-target.js";
/** Host keys as CONFIRM pins them (`result.ssh_host_keys`): parsing, matching, fingerprints, the mismatch message. */
export { pinnedHostKeys, presentedHostKey, matchesPinned, fingerprint, hostKeyMismatchMessage } from "./ssh/host-keys.js";
/** Host keys from OpenSSH public key lines (`ssh_host_*_key.pub`, cloud-init's console block, `known_hosts`). */
export { hostKeysFromPublicKeyLines } from "./ssh/host-keys.js";
/** Whether a machine answers SSH with a pinned host key (TCP, greeting, key exchange; no login): health checks. */
export { probeSsh } from "./ssh/probe.js";
export type { SshProbeTarget, SshProbeResult } from "./ssh/probe.js";
/** CONFIRM's wait until a machine accepts SSH: verified against known host keys, or learned on first use. */
export { awaitSsh } from "./ssh/await-ssh.js";
export type { AwaitSshOptions, AwaitedSsh } from "./ssh/await-ssh.js";
export type { HostKeys, PresentedHostKey } from "./ssh/host-keys.js";
/** A fresh ed25519 key pair in OpenSSH formats. */
export { generateSshKeyPair } from "./ssh/key-pair.js";
export type { SshKeyPair } from "./ssh/key-pair.js";
/** Per-cluster key pairs in KV (`ssh-auth: { cluster_key: true }` makes the automators use them). */
export { ClusterKeys } from "./cluster-keys.js";
export type { ClusterKey } from "./cluster-keys.js";
/** Runs one command on a leased connection (the remote process group is killed on timeout/abort); its status. */
export { runRemote, remoteStatus, shellQuote } from "./ssh/remote-exec.js";
export type { RemoteCommand, RemoteOutcome } from "./ssh/remote-exec.js";
/** Makes a node's directory hold exactly a local directory's files (by checksum); a command that must succeed. */
export { syncDirectory, runChecked, RemoteSyncError } from "./ssh/remote-files.js";
export type { SyncReport } from "./ssh/remote-files.js";
/** A bounded tail of a streamed output, saying how much was dropped. */
export { OutputTail } from "./ssh/output-tail.js";

// ---- Actions -------------------------------------------------------------------------------------------------
/** The remote-or-sandbox skeleton of an automator that runs one command per service action (`shell`, `chef-solo`). */
export { createActionAutomator } from "./plugins/action-automator.js";
export type { ActionAutomatorDefinition, ActionAutomatorOptions, ActionPlace, ActionRun, PreparedAction } from "./plugins/action-automator.js";
/** The variables every action sees, the per-dispatch task file name, the `timeout_s` field. */
export { actionVariables, taskFileName, actionTimeoutSeconds } from "./plugins/action-env.js";
/** The script an action runs on a node: transient files (0600, removed however it ends), environment, command. */
export { remoteActionScript, removeFilesCommand } from "./plugins/remote-script.js";
export type { TransientFile, RemoteActionScript } from "./plugins/remote-script.js";
/** A local process's outcome and the status an action reports for it. */
export { exitStatus } from "./plugins/process.js";
export type { ProcessOutcome } from "./plugins/process.js";

// ---- Local sandbox -------------------------------------------------------------------------------------------
/** One sandbox per tenant for actions on the provisioner host (see provisioner/README.md, "Local actions"). */
export { createLocalSandbox, defaultSandbox } from "./sandbox/index.js";
/** Removes a local node's directory (and its cluster's once empty) without following links a tenant planted. */
export { removeNodeDir } from "./sandbox/removal.js";
export type { LocalSandbox, TenantSandbox, SandboxRunOptions, Isolation, SandboxMode } from "./sandbox/index.js";

// ---- Paths, periodic jobs, retries ---------------------------------------------------------------------------
/** Where a provisioner keeps a tenant's files; every name is one escaped path segment. */
export { tenantDir, tenantTmpDir, nodeDir, resourceDir, pathSegment, nameOfSegment } from "./paths.js";
/** Runs a job every interval, never two at once (orphan sweeps). */
export { every } from "./plugins/docker/periodic.js";
export type { Periodic } from "./plugins/docker/periodic.js";
/** Why something kept for a cluster is left over (no record, another tenant's, terminated), or undefined. */
export { orphanReason } from "./cluster-records.js";
/** One orphan sweep for any provider: removes what belongs to clusters Corral no longer knows, after a grace period. */
export { sweepOrphans } from "./orphan-sweep.js";
export type { OrphanCandidate, SweepOrphansOptions, SweepReport } from "./orphan-sweep.js";
/** A hardware flavor `<cpus>x<memory>` (`1x512m`, `2x4g`) as CPU and memory limits (the docker provider's format). */
export { parseFlavor } from "./plugins/docker/flavor.js";
export type { FlavorLimits, ParsedFlavor } from "./plugins/docker/flavor.js";
/** An abortable sleep, exponential backoff with jitter, retry until success or abort. */
export { sleep, backoffMs, retryUntil } from "@corral/shared";
/** Memoises an async setup (open a bucket, read the installation id); a failure is retried at the next call. */
export { retryingOnce } from "@corral/shared";
