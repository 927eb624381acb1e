import { awaitSsh, hostKeysFromPublicKeyLines, sleep, type HostKeys, type PluginContext, type PluginOutcome, type SshPool, type SshTarget } from "@corral/provisioner/sdk";
import { sshUserOf } from "./create.js";
import type { LxdDeps } from "./instances.js";
import type { Instance, InstanceState, LxdClient } from "./lxd-api.js";
import { instanceName, isNodeInstance } from "./naming.js";
import { lxdSettings } from "./settings.js";

/** A step of CONFIRM: its value, or the message that fails the task. */
type Step<T> = { ok: true; value: T } | { ok: false; error: string };

/** Where sshd keeps its public host keys; the key types an OpenSSH host may have. */
const HOST_KEY_FILES = ["ed25519", "ecdsa", "rsa"].map((type) => `/etc/ssh/ssh_host_${type}_key.pub`);
/** How often a host key read through the API that SSH did not present is read again before CONFIRM fails. */
const HOST_KEY_REREADS = 3;

/**
 * CONFIRM: waits (at most `timeoutMs`) until the node's instance runs with an IPv4 address, reads its SSH host keys
 * through LXD's file API (a channel the provisioner trusts, unlike the network), then waits until sshd presents
 * one of those keys and accepts the cluster key. The keys are pinned in the results. The node's hostname becomes
 * the instance's name in the DNS domain of its LXD network (the bridge's dnsmasq answers it for every instance on
 * the network), or its address when the network has no DNS.
 */
export async function confirmNode(ctx: PluginContext, deps: LxdDeps, pool: SshPool, defaultSocket: string, timeoutMs: number): Promise<PluginOutcome> {
  const { task } = ctx;
  const fail = (error: string): PluginOutcome => ({ status: 1, stderr: `lxd: ${error}\n` });
  const parsed = lxdSettings(task.config.provider?.provisioner ?? {}, defaultSocket);
  if (!parsed.ok) return fail(parsed.error);
  const settings = parsed.settings;
  const lxd = deps.client(settings);
  const started = Date.now();
  const deadline = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
  const gaveUp = (what: string) => (ctx.signal.aborted ? `CONFIRM was aborted while ${what}` : `gave up after ${Math.round(timeoutMs / 1000)} s ${what}`);

  const reported = task.config.results?.["providerid"];
  const name = typeof reported === "string" && reported !== "" ? reported : instanceName(deps.installation, task, task.config.nodenum, task.config.hostname);
  const find = async (): Promise<Instance | undefined> => {
    const instance = await lxd.getInstance(name, ctx.signal);
    return instance && isNodeInstance(instance, deps.installation, task) ? instance : undefined;
  };
  const stillThere = async (): Promise<string | undefined> => {
    const instance = await find();
    if (!instance) return `the instance ${name} of node ${task.nodeId} went away while SSH was awaited`;
    return instance.status === "Running" ? undefined : await stoppedReport(lxd, instance, ctx.signal);
  };

  const address = await waitForAddress(lxd, name, find, deadline, gaveUp, ctx.signal);
  if (!address.ok) return fail(address.error);
  const { ip, instance } = address.value;
  const key = await deps.clusterKeys.read(task.tenant, task.clusterId);
  if (!key) return fail(`the key pair of cluster ${task.clusterId} is missing (CREATE makes it)`);
  const target: SshTarget = { host: ip, port: 22, username: sshUserOf(settings, ctx), privateKey: key.privateKey };

  let hostKeys: HostKeys | undefined;
  let last = "";
  for (let read = 1; read <= HOST_KEY_REREADS; read++) {
    const keys = await waitForHostKeys(lxd, name, stillThere, deadline, gaveUp);
    if (!keys.ok) return fail(keys.error);
    if (hostKeys && sameKeys(hostKeys, keys.value)) break;
    hostKeys = keys.value;
    const remaining = timeoutMs - (Date.now() - started);
    if (remaining <= 0) return fail(gaveUp(`waiting for SSH at ${ip}`));
    const ssh = await awaitSsh(pool, target, ctx.signal, { timeoutMs: remaining, knownHostKeys: hostKeys, retryRefusedLogin: true, stillThere });
    if (ssh.ok) {
      const hostname = (await dnsName(lxd, instance, ctx.signal)) ?? ip;
      const types = Object.keys(hostKeys).join(", ");
      return {
        status: 0,
        stdout: `lxd: node ${task.config.hostname} is instance ${name}, answering SSH at ${ip} as ${hostname} (host keys ${types} read through LXD and pinned)\n`,
        hostname,
        ipaddresses: { access_v4: ip, bind_v4: ip },
        result: { ssh_host_keys: hostKeys },
      };
    }
    // sshd may have presented a key made after the files were read (an image whose cloud-init replaces them).
    last = ssh.error;
  }
  return fail(last);
}

async function waitForAddress(
  lxd: LxdClient,
  name: string,
  find: () => Promise<Instance | undefined>,
  deadline: AbortSignal,
  gaveUp: (what: string) => string,
  signal: AbortSignal,
): Promise<Step<{ ip: string; instance: Instance }>> {
  for (;;) {
    const instance = await find();
    if (!instance) return { ok: false, error: `instance ${name} does not exist (CREATE makes it)` };
    if (instance.status === "Running") {
      const ip = globalIpv4(await lxd.instanceState(name, signal), nicNames(instance));
      if (ip) return { ok: true, value: { ip, instance } };
    } else if (instance.status !== "Starting") {
      return { ok: false, error: await stoppedReport(lxd, instance, signal) };
    }
    if (!(await sleep(250, deadline))) return { ok: false, error: gaveUp(`waiting for instance ${name} to run with an IPv4 address`) };
  }
}

/** The instance's SSH host keys, read through the file API; waited for while sshd's keys are being made. */
async function waitForHostKeys(
  lxd: LxdClient,
  name: string,
  stillThere: () => Promise<string | undefined>,
  deadline: AbortSignal,
  gaveUp: (what: string) => string,
): Promise<Step<HostKeys>> {
  for (;;) {
    const files = await Promise.all(HOST_KEY_FILES.map((path) => lxd.readFile(name, path, deadline).catch(() => undefined)));
    const keys = hostKeysFromPublicKeyLines(files.map((f) => f?.toString("utf8") ?? "").join("\n"));
    if (keys) return { ok: true, value: keys };
    const gone = await stillThere();
    if (gone) return { ok: false, error: gone };
    if (!(await sleep(250, deadline))) return { ok: false, error: gaveUp(`waiting for the SSH host keys of instance ${name} (${HOST_KEY_FILES.join(", ")})`) };
  }
}

const sameKeys = (a: HostKeys, b: HostKeys) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

/** Interface names of the instance's NICs, eth0 first. */
function nicNames(instance: Instance): string[] {
  const names = Object.entries(instance.expanded_devices ?? instance.devices ?? {})
    .filter(([, d]) => d["type"] === "nic")
    .map(([device, d]) => d["name"] || device);
  return [...new Set(["eth0", ...names])];
}

/** The first global IPv4 address of the named interfaces, else of any interface but loopback. */
export function globalIpv4(state: InstanceState | undefined, preferred: string[]): string | undefined {
  const network = state?.network ?? {};
  const order = [...preferred.filter((n) => n in network), ...Object.keys(network).filter((n) => !preferred.includes(n) && n !== "lo")];
  for (const nic of order) {
    const found = network[nic]?.addresses?.find((a) => a.family === "inet" && a.scope === "global");
    if (found) return found.address;
  }
  return undefined;
}

/**
 * `<instance>.<dns.domain>` when the instance's eth0 is on a managed LXD network with DNS (its dnsmasq answers the
 * instance's name for every instance of the network); undefined otherwise.
 */
async function dnsName(lxd: LxdClient, instance: Instance, signal: AbortSignal): Promise<string | undefined> {
  const nic = Object.entries(instance.expanded_devices ?? {}).find(([device, d]) => d["type"] === "nic" && (d["name"] || device) === "eth0")?.[1];
  const networkName = nic?.["network"] || (nic?.["nictype"] === "bridged" ? nic["parent"] : undefined);
  if (!networkName) return undefined;
  const network = await lxd.getNetwork(networkName, signal).catch(() => undefined);
  if (!network?.managed || network.type !== "bridge" || network.config["dns.mode"] === "none") return undefined;
  return `${instance.name}.${network.config["dns.domain"] || "lxd"}`;
}

/** Why an instance is not running, with the end of its console log when LXD has one. */
async function stoppedReport(lxd: LxdClient, instance: Instance, signal: AbortSignal): Promise<string> {
  const console = await lxd.consoleTail(instance.name, 20, signal).catch(() => "");
  return `instance ${instance.name} is ${instance.status}${console ? `; the end of its console log:\n${console}` : ""}`;
}
