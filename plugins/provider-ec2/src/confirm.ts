import { awaitSsh, backoffMs, fingerprint, sleep, type HostKeys, type PluginContext, type PluginOutcome, type SshTarget } from "@corral/provisioner/sdk";
import { consoleHostKeys } from "./console-keys.js";
import type { Ec2Deps } from "./deps.js";
import type { Ec2Api, Ec2Instance } from "./ec2-api.js";
import { liveNodeInstances, reportedInstance, stateReasonText } from "./instances.js";
import { loginUser, readSettings, type Ec2Settings } from "./settings.js";

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
  /** When CONFIRM gives up, ms since the epoch, and the signal that fires then (or on the task's abort). */
  endsAt: number;
  deadline: AbortSignal;
  gaveUp(what: string): Step<never>;
}

/**
 * CONFIRM: waits (at most the confirm timeout) until the node's instance runs with its addresses, reads the host
 * keys cloud-init printed on the instance's console, then waits until its sshd presents one of them and lets the
 * cluster key in; those keys are pinned. With `trust_host_key_on_first_use` a console without keys is not waited
 * for: the key sshd presents is pinned, and the node records that it was trusted on first use.
 */
export async function confirmNode(ctx: PluginContext, deps: Ec2Deps): Promise<PluginOutcome> {
  const { task } = ctx;
  const read = readSettings(task);
  if (!read.ok) return failed(read.error).outcome;
  const { settings } = read;
  const timeoutMs = deps.timing.confirmTimeoutMs;
  const w: Waits = {
    ctx,
    deps,
    api: deps.api(settings),
    settings,
    endsAt: Date.now() + timeoutMs,
    deadline: AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]),
    gaveUp: (what) => failed(ctx.signal.aborted ? `CONFIRM was aborted while ${what}` : `gave up after ${Math.round(timeoutMs / 1000)} s ${what}`),
  };

  const ran = await waitForRunning(w);
  if (!ran.ok) return ran.outcome;
  const instance = ran.value;
  const bind = instance.privateIp ?? instance.publicIp!;
  const access = instance.publicIp ?? bind;
  const key = await deps.clusterKeys.read(task.tenant, task.clusterId);
  if (!key) return failed(`the key pair of cluster ${task.clusterId} is missing (CREATE makes it)`).outcome;
  const target: SshTarget = { host: access, port: 22, username: loginUser(task, settings), privateKey: key.privateKey };

  const fromConsole = settings.trustHostKeyOnFirstUse ? await consoleKeysNow(w, instance) : await waitForConsoleKeys(w, instance);
  if (!fromConsole.ok) return fromConsole.outcome;
  const knownHostKeys = fromConsole.value;
  const ssh = await awaitSsh(deps.pool, target, ctx.signal, {
    timeoutMs: Math.max(1, w.endsAt - Date.now()),
    ...(knownHostKeys ? { knownHostKeys } : {}),
    // cloud-init installs the key pair after sshd started: a refused login is retried.
    retryRefusedLogin: true,
    retryBaseMs: Math.min(250, deps.timing.pollMs),
    stillThere: lookedAtEvery(deps.timing.pollMs, () => stillRunning(w, instance)),
  });
  if (!ssh.ok) {
    const shown = knownHostKeys && /host key/.test(ssh.error) ? ` (instance ${instance.id}'s console shows ${describeKeys(knownHostKeys)})` : "";
    return failed(`${ssh.error}${shown}`).outcome;
  }
  const trust: HostKeyTrust = ssh.isTrustedOnFirstUse ? "first-use" : "console-output";
  const how = trust === "first-use" ? "trusted on first use: the console showed no host keys" : "as the instance's console shows";
  return {
    status: 0,
    stdout: `ec2: instance ${instance.id} of node ${task.config.hostname} runs at ${access} (private ${bind}) and answers SSH; host keys ${describeKeys(ssh.hostKeys)} pinned, ${how}\n`,
    hostname: instance.privateDnsName || task.config.hostname,
    ipaddresses: { access_v4: access, bind_v4: bind },
    result: { ssh_host_keys: ssh.hostKeys, ssh_host_key_trust: trust },
  };
}

const describeKeys = (keys: HostKeys) =>
  Object.entries(keys)
    .map(([type, key]) => `${type} ${fingerprint(key)}`)
    .join(", ");

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

/** Why an instance will not run for CONFIRM (it ended, or stopped) `when`, or undefined. */
function notRunning(instance: Ec2Instance, when: string): string | undefined {
  if (instance.state === "shutting-down" || instance.state === "terminated") {
    return `instance ${instance.id} ended ${instance.state} ${when}: ${stateReasonText(instance)}`;
  }
  if (instance.state === "stopping" || instance.state === "stopped") return `instance ${instance.id} is ${instance.state}: ${stateReasonText(instance)}`;
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
      const ended = notRunning(instance, "before CONFIRM found it running");
      if (ended) return failed(ended);
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

/** `check`, but at most once per `intervalMs`: SSH attempts come faster than EC2's API should be asked. */
function lookedAtEvery(intervalMs: number, check: () => Promise<string | undefined>): () => Promise<string | undefined> {
  let last = 0;
  return async () => {
    if (Date.now() - last < intervalMs) return undefined;
    last = Date.now();
    return check();
  };
}

/** Between SSH attempts: a message when the instance went away or ended. */
async function stillRunning(w: Waits, instance: Ec2Instance): Promise<string | undefined> {
  const found = await nodeInstance(w, "checking the instance");
  if (!found.ok) return undefined; // the wait is over anyway; awaitSsh says so
  const now = found.value;
  if (!now || now.id !== instance.id) return `ec2: instance ${instance.id} of node ${w.ctx.task.nodeId} went away while SSH was awaited`;
  const ended = notRunning(now, "while CONFIRM waited for its console and SSH");
  return ended && `ec2: ${ended}`;
}

const WAIT_FOR_CONSOLE =
  "the SSH host keys on the console (the block cloud-init prints between -----BEGIN SSH HOST KEY KEYS----- and " +
  "-----END SSH HOST KEY KEYS-----); an image without cloud-init needs the provider field trust_host_key_on_first_use";

async function waitForConsoleKeys(w: Waits, instance: Ec2Instance): Promise<Step<HostKeys>> {
  const what = `waiting for ${WAIT_FOR_CONSOLE.replace("the console", `instance ${instance.id}'s console`)}`;
  for (let attempt = 1; ; attempt++) {
    const output = await during(w, what, () => w.api.consoleOutput(instance.id, w.deadline));
    if (!output.ok) return output;
    const keys = consoleHostKeys(output.value);
    if (keys) return { ok: true, value: keys };
    if (attempt % 4 === 0) {
      const ended = await stillRunning(w, instance);
      if (ended) return failed(ended.replace(/^ec2: /, ""));
    }
    if (!(await sleep(backoffMs(attempt, w.deps.timing.pollMs, w.deps.timing.maxPollMs), w.deadline))) return w.gaveUp(what);
  }
}

/** With first-use trust: the console's keys if it shows them already (they are checked all the same), else none. */
async function consoleKeysNow(w: Waits, instance: Ec2Instance): Promise<Step<HostKeys | undefined>> {
  const output = await during(w, `reading instance ${instance.id}'s console`, () => w.api.consoleOutput(instance.id, w.deadline));
  return output.ok ? { ok: true, value: consoleHostKeys(output.value) } : output;
}
