/**
 * `@corral/provisioner/testing`: for tests and benchmarks only; a provisioner's users need only `@corral/provisioner`.
 * The parts tests drive on their own: SSH, the Docker and hostpool providers' pieces, the sandbox, the task feed,
 * per-tenant paths and cluster keys.
 */
export { SshPool, SshError } from "./ssh/pool.js";
export { runRemote } from "./ssh/remote-exec.js";
export { OutputTail } from "./ssh/output-tail.js";
export { generateSshKeyPair } from "./ssh/key-pair.js";
export { nodeTarget, sshKeyFile } from "./ssh/node-target.js";
export { withTarget } from "./ssh/remote-node.js";
export type { RemoteAccess } from "./ssh/remote-node.js";
export { ClusterKeys } from "./cluster-keys.js";

export {
  createDockerProvider,
  reconcileOrphans,
  DockerClient,
  DockerApiError,
  DockerTimeoutError,
  DockerUnreachableError,
  parseFlavor,
  containerName,
  LABEL,
  MANAGED_BY,
} from "./plugins/docker/index.js";
export { demuxLogs } from "./plugins/docker/docker-api.js";
/** Runs a job every interval, never two at once (the Docker provider's reconciler). */
export { every } from "./plugins/docker/periodic.js";
export { clusterFilter, hostnameParts, labelTerm, nodeFilter, nodeLabels } from "./plugins/docker/naming.js";
export { defaultSocketPath, dockerSettings } from "./plugins/docker/settings.js";

export { createHostpoolProvider } from "./plugins/hostpool/index.js";
export { readSettings as readHostpoolSettings, sshAuthOf } from "./plugins/hostpool/settings.js";

export { createLocalSandbox } from "./sandbox/index.js";
export type { LocalSandbox } from "./sandbox/index.js";
export { SANDBOX_ID_BASE, SANDBOX_ID_COUNT } from "./sandbox/tenant-ids.js";
export { createTaskFeed } from "./task-feed.js";
export type { TaskFeed } from "./task-feed.js";
export { nameOfSegment, tenantTmpDir } from "./paths.js";
