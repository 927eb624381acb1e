import { sleep } from "@corral/shared";
import { awaitSsh } from "../../ssh/await-ssh.js";
import type { SshPool, SshTarget } from "../../ssh/pool.js";
import type { PluginContext, PluginOutcome } from "../types.js";
import { deathReport, findNodeContainer, hasDied, type DockerDeps } from "./containers.js";
import type { ContainerInspect, DockerClient } from "./docker-api.js";
import { dockerSettings } from "./settings.js";

/** A step of CONFIRM: its value, or the outcome that ends the task. */
type Step<T> = { ok: true; value: T } | { ok: false; outcome: PluginOutcome };

const failed = (message: string): { ok: false; outcome: PluginOutcome } => ({ ok: false, outcome: { status: 1, stderr: `docker: ${message}\n` } });

/**
 * CONFIRM: waits (at most `timeoutMs`) until the node's container runs with an address on the network, then until
 * its sshd accepts the cluster key (`awaitSsh`); the host key it presents is pinned in the results, and the
 * connection stays in the pool for BOOTSTRAP.
 */
export async function confirmNode(ctx: PluginContext, deps: DockerDeps, pool: SshPool, defaultSocket: string, timeoutMs: number): Promise<PluginOutcome> {
  const { task } = ctx;
  const settings = dockerSettings(task.config.provider?.provisioner ?? {}, defaultSocket);
  const docker = deps.client(settings.socketPath);
  const started = Date.now();
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
  // The container's sshd presents the key its entrypoint just made: learned here, then pinned. A refused key ends
  // the wait at once (retryRefusedLogin is off): the entrypoint installs the cluster key before sshd starts.
  const ssh = await awaitSsh(pool, target, ctx.signal, {
    timeoutMs: Math.max(1, timeoutMs - (Date.now() - started)),
    stillThere: async () => {
      const now = await find();
      if (!now || now.Id !== container.Id) return `the container of node ${task.nodeId} went away while SSH was awaited`;
      return hasDied(now) ? deathReport(docker, now, ctx.signal) : undefined;
    },
  });
  if (!ssh.ok) return { status: 1, stderr: `docker: ${ssh.error}\n` };

  const hostname = task.config.hostname || [container.Config.Hostname, container.Config.Domainname].filter(Boolean).join(".");
  const types = Object.keys(ssh.hostKeys).join(", ");
  return {
    status: 0,
    stdout: `docker: node ${hostname} answers SSH at ${ip} (${types})\n`,
    hostname,
    ipaddresses: { access_v4: ip, bind_v4: ip },
    result: { ssh_host_keys: ssh.hostKeys },
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
