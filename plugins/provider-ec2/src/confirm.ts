import {
  backoffMs,
  fingerprint,
  hostKeyMismatchMessage,
  matchesPinned,
  sleep,
  SshError,
  type HostKeys,
  type PluginContext,
  type PluginOutcome,
  type PresentedHostKey,
  type SshTarget,
} from "@corral/provisioner/sdk";
import { consoleHostKeys } from "./console-keys.js";
import type { Ec2Deps } from "./deps.js";
import type { Ec2Api, Ec2Instance } from "./ec2-api.js";
import { liveNodeInstances, reportedInstance, stateReasonText } from "./instances.js";
import { readSettings, type Ec2Settings } from "./settings.js";

/** A step of CONFIRM: its value, or the outcome that ends the task. */
type Step<T> = { ok: true; value: T } | { ok: false; outcome: PluginOutcome };

const failed = (message: string): { ok: false; outcome: PluginOutcome } => ({ ok: false, outcome: { status: 1, stderr: `ec2: ${message}\n` } });

/** How a node's pinned host keys were learnt, recorded in its results (`ssh_host_key_trust`). */
export type HostKeyTrust = "console-output" | "first-use";

interface Waits {
  ctx: PluginContext;
  deps: Ec2Deps;
  api: Ec2Api;
  settings: Ec2Settings;
  deadline: AbortSignal;
  gaveUp(what: string): Step<never>;
}

/**
 * CONFIRM: waits (at most the confirm timeout) until the node's instance runs with its addresses, then until its
 * sshd lets the cluster key in, and reads the host keys cloud-init printed on the instance's console; the key
 * sshd presents must be one of them, and they are pinned. With `trust_host_key_on_first_use` a console without
 * keys is not waited for: the presented key is pinned, and the node records that it was trusted on first use.
 */
export async function confirmNode(ctx: PluginContext, deps: Ec2Deps): Promise<PluginOutcome> {
  const { task } = ctx;
  const read = readSettings(task);
  if (!read.ok) return failed(read.error).outcome;
  const { settings } = read;
  const timeoutMs = deps.timing.confirmTimeoutMs;
  const deadline = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
  const waits: Waits = {
    ctx,
    deps,
    api: deps.api(settings),
    settings,
    deadline,
    gaveUp: (what) => failed(ctx.signal.aborted ? `CONFIRM was aborted while ${what}` : `gave up after ${Math.round(timeoutMs / 1000)} s ${what}`),
  };

  const ran = await waitForRunning(waits);
  if (!ran.ok) return ran.outcome;
  const instance = ran.value;
  const bind = instance.privateIp ?? instance.publicIp!;
  const access = instance.publicIp ?? bind;
  const key = await deps.clusterKeys.read(task.tenant, task.clusterId);
  if (!key) return failed(`the key pair of cluster ${task.clusterId} is missing (CREATE makes it)`).outcome;
  const target: SshTarget = { host: access, port: 22, username: settings.sshUser, privateKey: key.privateKey };

  const learnt = await learnHostKeys(waits, instance, target);
  if (!learnt.ok) return learnt.outcome;
  const { presented, pinned, trust } = learnt.value;
  const hostname = instance.privateDnsName || task.config.hostname;
  const how = trust === "first-use" ? "trusted on first use: the console showed no host keys" : "matches the instance's console";
  return {
    status: 0,
    stdout: `ec2: instance ${instance.id} of node ${task.config.hostname} runs at ${access} (private ${bind}) and answers SSH; host key ${presented.type} ${fingerprint(presented.key)} ${how}\n`,
    hostname,
    ipaddresses: { access_v4: access, bind_v4: bind },
    result: { ssh_host_keys: pinned, ssh_host_key_trust: trust },
  };
}

/**
 * An EC2 call of a wait: a call cut short by the wait's end is the end of the wait (`what` says what was awaited),
 * any other failure is thrown.
 */
async function during<T>(w: Waits, what: string, call: () => Promise<T>): Promise<Step<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (err) {
    if (w.deadline.aborted) return w.gaveUp(what);
    throw err;
  }
}

/** The node's instance: the one CREATE reported, else its live one by tags. */
function nodeInstance(w: Waits, what: string): Promise<Step<Ec2Instance | undefined>> {
  const { api, deps, ctx } = w;
  return during(w, what, async () => (await reportedInstance(api, deps.installation, ctx.task, w.deadline)) ?? (await liveNodeInstances(api, deps.installation, ctx.task, w.deadline))[0]);
}

/** An instance that will not run for CONFIRM: ended, or stopped. */
function notRunning(instance: Ec2Instance): Step<never> | undefined {
  if (instance.state === "shutting-down" || instance.state === "terminated") {
    return failed(`instance ${instance.id} ended ${instance.state} before CONFIRM found it running: ${stateReasonText(instance)}`);
  }
  if (instance.state === "stopping" || instance.state === "stopped") return failed(`instance ${instance.id} is ${instance.state}: ${stateReasonText(instance)}`);
  return undefined;
}

async function waitForRunning(w: Waits): Promise<Step<Ec2Instance>> {
  const { task } = w.ctx;
  const reported = task.config.results?.["providerid"];
  let last = `EC2 to list the instance of node ${task.nodeId}`;
  for (let attempt = 1; ; attempt++) {
    const found = await nodeInstance(w, `waiting for ${last}`);
    if (!found.ok) return found;
    const instance = found.value;
    if (instance) {
      const ended = notRunning(instance);
      if (ended) return ended;
      const wantsPublic = w.settings.associatePublicIp === true;
      if (instance.state === "running" && instance.privateIp && (!wantsPublic || instance.publicIp)) return { ok: true, value: instance };
      last = `instance ${instance.id} to run with its address${wantsPublic ? "es" : ""} (it is ${instance.state})`;
    } else if (typeof reported === "string" && reported !== "") {
      // EC2 may not list an instance for a few seconds after RunInstances answered.
      last = `EC2 to list instance ${reported}`;
    } else {
      return failed(`node ${task.nodeId} has no instance (CREATE launches it)`);
    }
    if (!(await sleep(backoffMs(attempt, w.deps.timing.pollMs, w.deps.timing.maxPollMs), w.deadline))) return w.gaveUp(`waiting for ${last}`);
  }
}

interface Learnt {
  presented: PresentedHostKey;
  pinned: HostKeys;
  trust: HostKeyTrust;
}

/**
 * SSH and the console's keys side by side (EC2 fills the console output minutes after boot, often after sshd is
 * up); either failing stops the other.
 */
async function learnHostKeys(w: Waits, instance: Ec2Instance, target: SshTarget): Promise<Step<Learnt>> {
  const stop = new AbortController();
  const both: Waits = { ...w, deadline: AbortSignal.any([w.deadline, stop.signal]) };
  const stopOnFailure = <T>(step: Step<T>) => {
    if (!step.ok) stop.abort();
    return step;
  };
  const stopOnThrow = (err: unknown): never => {
    stop.abort();
    throw err;
  };
  const [ssh, fromConsole] = await Promise.all([
    waitForSsh(both, instance, target).then(stopOnFailure, stopOnThrow),
    w.settings.trustHostKeyOnFirstUse ? Promise.resolve(undefined) : waitForConsoleKeys(both, instance).then(stopOnFailure, stopOnThrow),
  ]);
  if (!ssh.ok) return ssh;
  if (fromConsole && !fromConsole.ok) return fromConsole;
  const presented = ssh.value;
  // With first-use trust the console is still read once: keys it shows are checked and pinned all the same.
  let keys = fromConsole?.value;
  if (!keys) {
    const output = await during(w, `reading instance ${instance.id}'s console`, () => w.api.consoleOutput(instance.id, w.deadline));
    if (!output.ok) return output;
    keys = consoleHostKeys(output.value);
  }
  if (!keys) return { ok: true, value: { presented, pinned: { [presented.type]: presented.key }, trust: "first-use" } };
  if (!matchesPinned(keys, presented)) {
    return failed(
      `${hostKeyMismatchMessage(target.host, keys, presented).replace(/^ssh: /, "").replace("but CONFIRM pinned", `but instance ${instance.id}'s console shows`)}`,
    );
  }
  return { ok: true, value: { presented, pinned: keys, trust: "console-output" } };
}

/**
 * Retries while sshd is not up or does not let the key in yet (cloud-init installs it after sshd starts); the
 * instance is looked at between attempts, so one that ends is reported at once.
 */
async function waitForSsh(w: Waits, instance: Ec2Instance, target: SshTarget): Promise<Step<PresentedHostKey>> {
  let last = "";
  for (let attempt = 1; ; attempt++) {
    try {
      return { ok: true, value: await w.deps.pool.learnHostKey(target, w.deadline) };
    } catch (err) {
      if (!(err instanceof SshError)) throw err;
      if (err.kind === "aborted") return w.gaveUp(`waiting for SSH at ${target.host} (${last || err.message})`);
      last = err.message;
    }
    const found = await nodeInstance(w, `waiting for SSH at ${target.host} (${last})`);
    if (!found.ok) return found;
    const now = found.value;
    if (!now || now.id !== instance.id) return failed(`instance ${instance.id} of node ${w.ctx.task.nodeId} went away while SSH was awaited`);
    const ended = notRunning(now);
    if (ended) return ended;
    if (!(await sleep(backoffMs(attempt, w.deps.timing.pollMs, w.deps.timing.maxPollMs), w.deadline))) {
      return w.gaveUp(`waiting for SSH at ${target.host} (${last})`);
    }
  }
}

async function waitForConsoleKeys(w: Waits, instance: Ec2Instance): Promise<Step<HostKeys>> {
  const what =
    `waiting for the SSH host keys on instance ${instance.id}'s console (the block cloud-init prints between ` +
    `-----BEGIN SSH HOST KEY KEYS----- and -----END SSH HOST KEY KEYS-----); an image without cloud-init needs ` +
    `the provider field trust_host_key_on_first_use`;
  for (let attempt = 1; ; attempt++) {
    const output = await during(w, what, () => w.api.consoleOutput(instance.id, w.deadline));
    if (!output.ok) return output;
    const keys = consoleHostKeys(output.value);
    if (keys) return { ok: true, value: keys };
    if (!(await sleep(backoffMs(attempt, w.deps.timing.pollMs, w.deps.timing.maxPollMs), w.deadline))) return w.gaveUp(what);
  }
}
