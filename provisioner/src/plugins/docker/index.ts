import type { NatsConnection } from "@nats-io/transport-node";
import { installationId, openClusterRecordReader, retryingOnce, type Logger } from "@corral/shared";
import type { ClusterKeys } from "../../cluster-keys.js";
import type { RemoteAccess } from "../../ssh/remote-node.js";
import type { PluginContext, PluginOutcome, ProviderPlugin } from "../types.js";
import { confirmNode } from "./confirm.js";
import type { DockerDeps } from "./containers.js";
import { createNode } from "./create.js";
import { deleteNode } from "./delete.js";
import { DockerClient, DockerError, DockerUnreachableError } from "./docker-api.js";
import { dockerHealth } from "./health.js";
import { every } from "./periodic.js";
import { StartGate } from "./start-gate.js";
import { reconcileOrphans } from "./reconcile.js";
import { defaultSocketPath } from "./settings.js";
import { DOCKER_SPEC } from "./spec.js";

export { DOCKER_SPEC } from "./spec.js";
export { reconcileOrphans, type ReconcileOptions, type ReconcileReport } from "./reconcile.js";
export { DockerClient, DockerError, DockerApiError, DockerUnreachableError, DockerTimeoutError } from "./docker-api.js";
export { parseFlavor, type FlavorLimits } from "./flavor.js";
export { containerName, LABEL, MANAGED_BY } from "./naming.js";

export interface DockerProviderOptions {
  /** The provisioner's SSH pool (closed by `close`) and credential sources. */
  access: RemoteAccess;
  nc: NatsConnection;
  log: Logger;
  clusterKeys: ClusterKeys;
  /** Between two orphan sweeps, ms; 0 turns the sweeps off. @default 60000 */
  reconcileIntervalMs?: number;
  /** A container whose cluster is unknown is removed only when older than this, ms. @default 600000 */
  orphanGraceMs?: number;
  /** Socket of providers without `socket_path`. @default DOCKER_HOST's unix socket, else /var/run/docker.sock */
  socketPath?: string;
  /** How long CONFIRM waits for the container and its sshd, ms. @default 120000 */
  confirmTimeoutMs?: number;
  /** Container starts at once per Docker host (see start-gate.ts). @default 16 */
  maxConcurrentStarts?: number;
}

/**
 * The `docker` provider: nodes are containers of the node image on a Docker host, reached over SSH with the
 * cluster's key pair. Besides the tasks it sweeps orphans (containers of clusters Corral no longer knows) of every
 * Docker host it has served, and of the default one.
 */
export function createDockerProvider(options: DockerProviderOptions): ProviderPlugin {
  const { access, log } = options;
  const defaultSocket = options.socketPath ?? defaultSocketPath();
  const clients = new Map<string, DockerClient>();
  const client = (socketPath: string) => {
    let made = clients.get(socketPath);
    if (!made) clients.set(socketPath, (made = new DockerClient({ socketPath })));
    return made;
  };
  const gates = new WeakMap<DockerClient, StartGate>();
  const startGate = (docker: DockerClient) => {
    let gate = gates.get(docker);
    if (!gate) gates.set(docker, (gate = new StartGate(options.maxConcurrentStarts ?? 16)));
    return gate;
  };
  const installationOnce = retryingOnce(() => installationId(options.nc));
  const depsNow = async (): Promise<DockerDeps> => ({ client, startGate, clusterKeys: options.clusterKeys, installation: await installationOnce() });
  client(defaultSocket);

  const clusters = retryingOnce(() => openClusterRecordReader(options.nc));
  const sweep = async () => {
    for (const docker of clients.values()) {
      try {
        const report = await reconcileOrphans({
          docker,
          clusters: await clusters(),
          clusterKeys: options.clusterKeys,
          installation: await installationOnce(),
          log,
          orphanGraceMs: options.orphanGraceMs ?? 600_000,
        });
        if (report.removed.length) log.info("docker: orphan sweep done", { socketPath: docker.socketPath, ...report });
      } catch (err) {
        // A host without Docker is normal for the default socket; say it quietly.
        const level = err instanceof DockerUnreachableError ? "debug" : "warn";
        log[level]("docker: orphan sweep failed", { socketPath: docker.socketPath, error: String(err) });
      }
    }
  };
  const interval = options.reconcileIntervalMs ?? 60_000;
  const sweeper = interval > 0 ? every(interval, sweep) : undefined;

  const guarded =
    (op: (ctx: PluginContext) => Promise<PluginOutcome>) =>
    async (ctx: PluginContext): Promise<PluginOutcome> => {
      try {
        return await op(ctx);
      } catch (err) {
        if (err instanceof DockerError) return { status: 1, stderr: `${err.message}\n` };
        throw err;
      }
    };

  return {
    kind: "providertypes",
    spec: DOCKER_SPEC,
    create: guarded(async (ctx) => createNode(ctx, await depsNow(), defaultSocket)),
    confirm: guarded(async (ctx) => confirmNode(ctx, await depsNow(), access.pool, defaultSocket, options.confirmTimeoutMs ?? 120_000)),
    delete: guarded(async (ctx) => deleteNode(ctx, await depsNow(), defaultSocket)),
    health: dockerHealth(depsNow, defaultSocket),
    async close() {
      await sweeper?.stop();
      await access.pool.close();
    },
  };
}
