import { every, type PluginContext, type PluginFactory, type PluginHost, type PluginOutcome, type ProviderPlugin } from "@corral/provisioner/sdk";
import { confirmNode } from "./confirm.js";
import { createNode, UserKeyError } from "./create.js";
import { deleteNode } from "./delete.js";
import { ec2Health } from "./health.js";
import type { Ec2Deps, Ec2Timing } from "./deps.js";
import { clientKey, Ec2Api, Ec2Error } from "./ec2-api.js";
import type { Ec2Settings } from "./settings.js";
import { EC2_SPEC } from "./spec.js";
import { sweepEc2Orphans } from "./sweep.js";

export { EC2_SPEC, EC2_PROVIDER_TYPE } from "./spec.js";
export { sweepEc2Orphans, type Ec2SweepOptions, type Ec2SweepReport } from "./sweep.js";
export { consoleHostKeys, BEGIN_HOST_KEYS, END_HOST_KEYS } from "./console-keys.js";
export { Ec2Api, Ec2Error } from "./ec2-api.js";
export { clientToken, keyPairName, TAG } from "./naming.js";
export { readSettings, type Ec2Settings } from "./settings.js";

export interface Ec2ProviderOptions extends Partial<Ec2Timing> {
  /** Between two orphan sweeps, ms; 0 turns them off. @default 60000 */
  sweepIntervalMs?: number;
  /** An instance or key pair of a cluster Corral does not know is removed only when older than this, ms. @default 600000 */
  orphanGraceMs?: number;
  /** Attempts per EC2 call, the first included (the SDK retries throttling and transient errors). @default 3 */
  maxAttempts?: number;
}

const DEFAULTS = { confirmTimeoutMs: 600_000, pollMs: 1_000, maxPollMs: 5_000, sweepIntervalMs: 60_000, orphanGraceMs: 600_000 };

/** The options a provisioner's environment sets (`CORRAL_EC2_*`, milliseconds or a count). */
export function optionsFromEnv(env: Readonly<Record<string, string | undefined>>): Ec2ProviderOptions {
  const read = (name: string): number | undefined => {
    const raw = env[name]?.trim();
    if (!raw) return undefined;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) throw new Error(`${name}=${raw} is not a number of 0 or more`);
    return n;
  };
  const options: Ec2ProviderOptions = {};
  const set = <K extends keyof Ec2ProviderOptions>(key: K, value: number | undefined) => {
    if (value !== undefined) options[key] = value;
  };
  set("confirmTimeoutMs", read("CORRAL_EC2_CONFIRM_TIMEOUT_MS"));
  set("pollMs", read("CORRAL_EC2_POLL_MS"));
  set("maxPollMs", read("CORRAL_EC2_MAX_POLL_MS"));
  set("sweepIntervalMs", read("CORRAL_EC2_SWEEP_INTERVAL_MS"));
  set("orphanGraceMs", read("CORRAL_EC2_ORPHAN_GRACE_MS"));
  set("maxAttempts", read("CORRAL_EC2_MAX_ATTEMPTS"));
  return options;
}

/**
 * The `ec2` provider: nodes are EC2 instances (or an EC2-compatible cloud's) reached over SSH with the cluster's
 * key pair. Besides the tasks it sweeps orphans (instances and key pairs of clusters Corral no longer knows) in
 * every region, endpoint and account it has served since it started.
 */
export function createEc2Provider(host: PluginHost, options: Ec2ProviderOptions = {}): ProviderPlugin {
  const timing: Ec2Timing = {
    confirmTimeoutMs: options.confirmTimeoutMs ?? DEFAULTS.confirmTimeoutMs,
    pollMs: options.pollMs ?? DEFAULTS.pollMs,
    maxPollMs: options.maxPollMs ?? DEFAULTS.maxPollMs,
  };
  const clients = new Map<string, Ec2Api>();
  const api = (settings: Ec2Settings) => {
    const key = clientKey(settings);
    let made = clients.get(key);
    if (!made) clients.set(key, (made = new Ec2Api(settings, options.maxAttempts !== undefined ? { maxAttempts: options.maxAttempts } : {})));
    return made;
  };
  const deps = async (): Promise<Ec2Deps> => ({
    api,
    clusterKeys: host.clusterKeys,
    pool: host.ssh.pool,
    installation: await host.installationId(),
    log: host.log,
    timing,
  });

  const sweep = async () => {
    for (const client of clients.values()) {
      try {
        const report = await sweepEc2Orphans({
          api: client,
          clusters: await host.clusters(),
          clusterKeys: host.clusterKeys,
          installation: await host.installationId(),
          log: host.log,
          orphanGraceMs: options.orphanGraceMs ?? DEFAULTS.orphanGraceMs,
        });
        if (report.terminated.length || report.keyPairs.length) host.log.info("ec2: orphan sweep done", { where: client.where, ...report });
      } catch (err) {
        host.log.warn("ec2: orphan sweep failed", { where: client.where, error: String(err) });
      }
    }
  };
  const interval = options.sweepIntervalMs ?? DEFAULTS.sweepIntervalMs;
  const sweeper = interval > 0 ? every(interval, sweep) : undefined;

  const guarded =
    (op: (ctx: PluginContext, deps: Ec2Deps) => Promise<PluginOutcome>) =>
    async (ctx: PluginContext): Promise<PluginOutcome> => {
      try {
        return await op(ctx, await deps());
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        if (err instanceof Ec2Error) return { status: 1, stderr: `${err.message}\n` };
        if (err instanceof UserKeyError) return { status: 1, stderr: `ec2: ${err.message}\n` };
        throw err;
      }
    };

  return {
    kind: "providertypes",
    spec: EC2_SPEC,
    create: guarded(createNode),
    confirm: guarded(confirmNode),
    delete: guarded(deleteNode),
    health: ec2Health(deps),
    async close() {
      await sweeper?.stop();
      for (const client of clients.values()) client.destroy();
      clients.clear();
    },
  };
}

/** The plugin module's factories (`provisioner.plugins=@corral/provider-ec2`): the `ec2` provider, set by `CORRAL_EC2_*`. */
const plugins: PluginFactory[] = [(host) => createEc2Provider(host, optionsFromEnv(host.env))];
export default plugins;
