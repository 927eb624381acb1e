import { backoffMs, sleep } from "../../retry.js";
import type { PresentedHostKey } from "../../ssh/host-keys.js";
import { SshError, type SshPool, type SshTarget } from "../../ssh/pool.js";
import type { PluginContext, PluginOutcome } from "../types.js";
import { deathReport, findNodeContainer, hasDied, type DockerDeps } from "./containers.js";
import type { ContainerInspect, DockerClient } from "./docker-api.js";
import { dockerSettings } from "./settings.js";

/** A step of CONFIRM: its value, or the outcome that ends the task. */
type Step<T> = { ok: true; value: T } | { ok: false; outcome: PluginOutcome };

const failed = (message: string): { ok: false; outcome: PluginOutcome } => ({ ok: false, outcome: { status: 1, stderr: `docker: ${message}\n` } });

/**
 * CONFIRM: waits (at most `timeoutMs`) until the node's container runs with an address on the network, then until
 * its sshd accepts the cluster key; the host key it presents is pinned in the results.
 */
export async function confirmNode(ctx: PluginContext, deps: DockerDeps, pool: SshPool, defaultSocket: string, timeoutMs: number): Promise<PluginOutcome> {
  const { task } = ctx;
  const settings = dockerSettings(task.config.provider?.provisioner ?? {}, defaultSocket);
  const docker = deps.client(settings.socketPath);
  const deadline = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
  const waited = (what: string) =>
    failed(ctx.signal.aborted ? `CONFIRM was aborted while ${what}` : `gave up after ${timeoutMs / 1000} s ${what}`);

  const find = () => findNodeContainer(docker, deps.installation, task, ctx.signal);
  const address = await waitForAddress(ctx, docker, find, settings.network, deadline, waited);
  if (!address.ok) return address.outcome;
  const { ip, container } = address.value;
  const key = await deps.clusterKeys.read(task.tenant, task.clusterId);
  if (!key) return { status: 1, stderr: `docker: the key pair of cluster ${task.clusterId} is missing (CREATE makes it)\n` };
  const target: SshTarget = { host: ip, port: 22, username: settings.sshUser, privateKey: key.privateKey };
  const hostKey = await waitForSsh(ctx, docker, find, pool, target, container.Id, deadline, waited);
  if (!hostKey.ok) return hostKey.outcome;

  const hostname = task.config.hostname || [container.Config.Hostname, container.Config.Domainname].filter(Boolean).join(".");
  return {
    status: 0,
    stdout: `docker: node ${hostname} answers SSH at ${ip} (${hostKey.value.type})\n`,
    hostname,
    ipaddresses: { access_v4: ip, bind_v4: ip },
    result: { ssh_host_keys: { [hostKey.value.type]: hostKey.value.key } },
  };
}

type FindContainer = () => Promise<ContainerInspect | undefined>;

async function waitForAddress(
  ctx: PluginContext,
  docker: DockerClient,
  find: FindContainer,
  network: string,
  deadline: AbortSignal,
  waited: (what: string) => Step<never>,
): Promise<Step<{ ip: string; container: ContainerInspect }>> {
  for (;;) {
    const container = await find();
    if (!container) return failed(`node ${ctx.task.nodeId} has no container (CREATE makes it)`);
    if (hasDied(container)) return failed(await deathReport(docker, container, ctx.signal));
    const ip = container.State.Running ? container.NetworkSettings.Networks?.[network]?.IPAddress : undefined;
    if (ip) return { ok: true, value: { ip, container } };
    if (!(await sleep(250, deadline))) return waited(`waiting for container ${container.Id.slice(0, 12)} to run with an address on network ${network}`);
  }
}

/** Retries while sshd is not up yet ("connect"); a refused key or anything else ends it at once. */
async function waitForSsh(
  ctx: PluginContext,
  docker: DockerClient,
  find: FindContainer,
  pool: SshPool,
  target: SshTarget,
  containerId: string,
  deadline: AbortSignal,
  waited: (what: string) => Step<never>,
): Promise<Step<PresentedHostKey>> {
  let last = "";
  for (let attempt = 1; ; attempt++) {
    try {
      return { ok: true, value: await pool.learnHostKey(target, deadline) };
    } catch (err) {
      if (!(err instanceof SshError)) throw err;
      if (err.kind === "aborted") return waited(`waiting for SSH at ${target.host} (${last || err.message})`);
      if (err.kind !== "connect") return failed(err.message);
      last = err.message;
    }
    const container = await find();
    if (!container || container.Id !== containerId) return failed(`the container of node ${ctx.task.nodeId} went away while SSH was awaited`);
    if (hasDied(container)) return failed(await deathReport(docker, container, ctx.signal));
    if (!(await sleep(backoffMs(attempt, 250, 2_000), deadline))) return waited(`waiting for SSH at ${target.host} (${last})`);
  }
}
