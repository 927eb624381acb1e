import type { TaskMessage } from "@corral/contracts";
import { backoffMs, sleep } from "@corral/shared";
import type { ClusterKeys } from "../../cluster-keys.js";
import { DockerError, isDockerStatus, type ContainerInspect, type DockerClient, type NetworkInspect } from "./docker-api.js";
import { clusterFilter, LABEL, MANAGED_BY, nodeFilter } from "./naming.js";
import type { StartGate } from "./start-gate.js";

/** What the provider's operations share: one client per socket, its start gate, and the cluster key pairs. */
export interface DockerDeps {
  client(socketPath: string): DockerClient;
  /** The container starts of a client's Docker host go through its gate. */
  startGate(client: DockerClient): StartGate;
  clusterKeys: ClusterKeys;
  /** This installation's id, on every container's labels and in every filter. */
  installation: string;
}

export const DEFAULT_IMAGE = "corral/node:bookworm";

/**
 * The task node's container: the one CREATE reported (`results.providerid`) when it still exists and carries the
 * node's label, else the first one labelled with the node.
 */
export async function findNodeContainer(
  docker: DockerClient,
  installation: string,
  task: TaskMessage,
  signal?: AbortSignal,
): Promise<ContainerInspect | undefined> {
  const providerId = task.config.results?.["providerid"];
  if (typeof providerId === "string" && providerId !== "") {
    const found = await inspectIfExists(docker, providerId, signal);
    if (found && isNodeContainer(found, task)) return found;
  }
  const [first] = await docker.listContainers(nodeFilter(installation, task.tenant, task.nodeId), signal);
  return first ? inspectIfExists(docker, first.Id, signal) : undefined;
}

export async function inspectIfExists(docker: DockerClient, idOrName: string, signal?: AbortSignal): Promise<ContainerInspect | undefined> {
  try {
    return await docker.inspectContainer(idOrName, signal);
  } catch (err) {
    if (isDockerStatus(err, 404)) return undefined;
    throw err;
  }
}

/** Whether a container was made by this provider for the task's node. */
export function isNodeContainer(container: ContainerInspect, task: Pick<TaskMessage, "tenant" | "nodeId">): boolean {
  const labels = container.Config.Labels ?? {};
  return labels[LABEL.managed] === MANAGED_BY && labels[LABEL.tenant] === task.tenant && labels[LABEL.node] === task.nodeId;
}

/** Network lookups in flight per client and name: concurrent CREATEs of one provider share one. */
const networksInFlight = new WeakMap<DockerClient, Map<string, Promise<string>>>();

/**
 * The id of the network named `name`, created as a user-defined bridge (its containers resolve each other's
 * names) when missing. Docker does not stop concurrent creators from making several networks of one name, which
 * makes the name ambiguous; so within a provider the callers share one lookup, and creators in other processes
 * agree on the oldest network (lowest id on a tie), each removing its own if it lost.
 */
export function ensureNetwork(docker: DockerClient, name: string, signal?: AbortSignal): Promise<string> {
  let inFlight = networksInFlight.get(docker);
  if (!inFlight) networksInFlight.set(docker, (inFlight = new Map()));
  let found = inFlight.get(name);
  if (!found) {
    const map = inFlight;
    found = findOrCreateNetwork(docker, name, signal).finally(() => map.delete(name));
    map.set(name, found);
  }
  return found;
}

async function findOrCreateNetwork(docker: DockerClient, name: string, signal?: AbortSignal): Promise<string> {
  const existing = oldest(await docker.listNetworks(name, signal));
  if (existing) return existing.Id;
  let mine: string | undefined;
  try {
    mine = await docker.createNetwork(name, { [LABEL.managed]: MANAGED_BY }, signal);
  } catch (err) {
    if (!isDockerStatus(err, 409)) throw err;
  }
  const winner = oldest(await docker.listNetworks(name, signal));
  if (mine && winner?.Id !== mine) await docker.removeNetwork(mine, signal);
  if (!winner) throw new DockerError(`docker: network ${name} vanished right after it was created`);
  return winner.Id;
}

function oldest(networks: NetworkInspect[]): NetworkInspect | undefined {
  const created = (n: NetworkInspect) => Date.parse(n.Created) || 0;
  return [...networks].sort((a, b) => created(a) - created(b) || (a.Id < b.Id ? -1 : a.Id > b.Id ? 1 : 0))[0];
}

/**
 * Starts a container. While another process's duplicate of its network still exists (see `ensureNetwork`), Docker
 * calls the network name ambiguous: that passes within moments, so it is retried for a few seconds.
 */
export async function startNodeContainer(docker: DockerClient, id: string, signal?: AbortSignal): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await docker.startContainer(id, signal);
    } catch (err) {
      if (!(isDockerStatus(err, 400) && /is ambiguous/.test(err.dockerMessage)) || attempt >= 10) throw err;
    }
    if (!(await sleep(backoffMs(attempt, 100, 1_000), signal))) return;
  }
}

/** A container that stopped for good (CONFIRM cannot wait for it). */
export function hasDied(container: ContainerInspect): boolean {
  const { Status } = container.State;
  return Status === "exited" || Status === "dead";
}

/** Why a container is not running: exit code, OOM, Docker's error, and its last log lines when they can be had. */
export async function deathReport(docker: DockerClient, container: ContainerInspect, signal?: AbortSignal): Promise<string> {
  const { State } = container;
  const how = [`exit code ${State.ExitCode}`, State.OOMKilled ? "killed for lack of memory" : "", State.Error].filter(Boolean).join(", ");
  const logs = await docker.containerLogs(container.Id, 20, signal).catch(() => "");
  const tail = logs.trim() ? `; its last log lines:\n${logs.trimEnd()}` : "";
  return `container ${container.Name.replace(/^\//, "")} is ${State.Status} (${how})${tail}`;
}

/**
 * Removes the cluster's key pair once none of its containers is left (the cluster's last DELETE, or the
 * reconciler after removing orphans). Returns whether it did.
 */
export async function removeKeyOfEmptyCluster(
  docker: DockerClient,
  clusterKeys: ClusterKeys,
  installation: string,
  tenant: string,
  clusterId: string,
  signal?: AbortSignal,
): Promise<boolean> {
  if ((await docker.listContainers(clusterFilter(installation, tenant, clusterId), signal)).length > 0) return false;
  await clusterKeys.remove(tenant, clusterId);
  return true;
}
