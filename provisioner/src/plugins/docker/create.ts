import { backoffMs, sleep } from "@corral/shared";
import type { PluginContext, PluginOutcome } from "../types.js";
import {
  DEFAULT_IMAGE,
  ensureNetwork,
  inspectIfExists,
  isNodeContainer,
  startNodeContainer,
  type DockerDeps,
} from "./containers.js";
import { isDockerStatus, type ContainerCreateBody, type DockerClient } from "./docker-api.js";
import { parseFlavor, type FlavorLimits } from "./flavor.js";
import { containerName, hostnameParts, nodeLabels, nodeFilter } from "./naming.js";
import { dockerSettings, type DockerSettings } from "./settings.js";

/** Environment variable the node image's entrypoint writes to root's authorized_keys. */
export const AUTHORIZED_KEYS_ENV = "CORRAL_AUTHORIZED_KEYS";

/**
 * CREATE: one container per node, started, with the cluster's public key. Idempotent: a container already
 * labelled with the node (an earlier dispatch, or a concurrent one losing the name race) is adopted and started.
 */
export async function createNode(ctx: PluginContext, deps: DockerDeps, defaultSocket: string): Promise<PluginOutcome> {
  const { task, signal } = ctx;
  const settings = dockerSettings(task.config.provider?.provisioner ?? {}, defaultSocket);
  const flavor = parseFlavor(task.config.flavor);
  if (!flavor.ok) return { status: 1, stderr: `docker: ${flavor.error}\n` };
  const docker = deps.client(settings.socketPath);

  const [existing] = await docker.listContainers(nodeFilter(deps.installation, task.tenant, task.nodeId), signal);
  let id = existing?.Id;
  let how = "adopted";
  if (!id) {
    const made = await createContainer(ctx, deps, docker, settings, flavor.limits);
    if (!made.ok) return { status: 1, stderr: `docker: ${made.error}\n` };
    id = made.id;
    how = made.how;
  }
  await deps.startGate(docker).run(() => startNodeContainer(docker, id, signal), signal);
  ctx.log.info("docker: node container started", { nodeId: task.nodeId, container: id, how });
  return {
    status: 0,
    stdout: `docker: container ${id.slice(0, 12)} of node ${task.config.hostname} ${how} and started on network ${settings.network}\n`,
    result: { providerid: id, "ssh-auth": { user: settings.sshUser, cluster_key: true } },
  };
}

type Created = { ok: true; id: string; how: "created" | "adopted" } | { ok: false; error: string };

async function createContainer(
  ctx: PluginContext,
  deps: DockerDeps,
  docker: DockerClient,
  settings: DockerSettings,
  limits: FlavorLimits,
): Promise<Created> {
  const { task, signal } = ctx;
  const { config } = task;
  const image = config.image?.trim() || DEFAULT_IMAGE;
  const name = containerName(task.tenant, task.clusterId, config.nodenum);
  const { hostname, domainname } = hostnameParts(config.hostname || name);
  const key = await deps.clusterKeys.getOrCreate(task.tenant, task.clusterId);
  const networkId = await ensureNetwork(docker, settings.network, signal);
  const body: ContainerCreateBody = {
    Image: image,
    Hostname: hostname,
    Domainname: domainname,
    Env: [`${AUTHORIZED_KEYS_ENV}=${key.publicKey}`],
    Labels: nodeLabels(deps.installation, task),
    HostConfig: {
      NetworkMode: networkId,
      ...(limits.nanoCpus !== undefined ? { NanoCpus: limits.nanoCpus } : {}),
      ...(limits.memoryBytes !== undefined ? { Memory: limits.memoryBytes } : {}),
    },
    // The alias makes the full hostname (what `%host.service.x%` macros expand to) resolve on the network.
    NetworkingConfig: { EndpointsConfig: { [networkId]: config.hostname ? { Aliases: [config.hostname] } : {} } },
  };
  try {
    return { ok: true, id: await docker.createContainer(name, body, signal), how: "created" };
  } catch (err) {
    if (isDockerStatus(err, 404) && /no such image/i.test(err.dockerMessage)) {
      return { ok: false, error: `image ${image} is not on this Docker host; build it with npm run node-image` };
    }
    if (!isDockerStatus(err, 409)) throw err;
  }
  // The name is taken: by this node's container (a concurrent CREATE of the node) it is adopted. Docker reserves
  // the name before that container can be inspected, so it is looked for a little while.
  for (let attempt = 1; attempt <= NAME_HOLDER_ATTEMPTS; attempt++) {
    const holder = await inspectIfExists(docker, name, signal);
    if (holder) {
      if (isNodeContainer(holder, task)) return { ok: true, id: holder.Id, how: "adopted" };
      break;
    }
    if (!(await sleep(backoffMs(attempt, 100, 1_000), signal))) break;
  }
  return { ok: false, error: `the container name ${name} is taken by a container that is not node ${task.nodeId}'s` };
}

const NAME_HOLDER_ATTEMPTS = 10;
