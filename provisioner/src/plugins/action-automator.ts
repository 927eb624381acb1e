import { rm } from "node:fs/promises";
import type { PluginSpec } from "@corral/contracts";
import { resourceDir } from "../paths.js";
import { defaultSandbox, type LocalSandbox, type TenantSandbox } from "../sandbox/index.js";
import { remoteStatus } from "../ssh/remote-exec.js";
import { syncDirectories } from "../ssh/remote-files.js";
import { prepareWorkDirs, REMOTE_RUN_DIR, REMOTE_WORK_DIR, remoteResourceDir, withRemoteNode, type RemoteAccess } from "../ssh/remote-node.js";
import { runsActionsLocally } from "./local-actions.js";
import { exitStatus } from "./process.js";
import { remoteActionScript, removeFilesCommand, type TransientFile } from "./remote-script.js";
import type { AutomatorPlugin, PluginContext, PluginOutcome, ServiceActionCall } from "./types.js";

/** Where an action runs, as the automator's `run` sees it. */
export interface ActionPlace {
  /** `local`: the provisioner host, in the tenant's sandbox; `remote`: the node, over SSH, as root. */
  where: "local" | "remote";
  /** The action's working directory: the node's directory here, or `/var/lib/corral/work` on the node. */
  workDir: string;
  /** Where its transient files go: the node's directory here (tenant-owned), or `/var/lib/corral/run` (root only). */
  runDir: string;
  /** Where one of the automator's synced resource types is: the tenant's synced copy here, or BOOTSTRAP's copy there. */
  resourceDir(type: string): string;
}

/** What to run for one action. */
export interface ActionRun {
  /** Run by `/bin/sh -c` in `place.workDir`. */
  command: string;
  /**
   * Variables on top of the base environment (locally the sandbox's minimal one, never the provisioner's; remotely
   * root's login environment). An undefined value is left out.
   */
  env: Record<string, string | undefined>;
  /** Files the action reads while it runs (paths under `place.runDir`): written 0600 before, removed however it ends. */
  files: TransientFile[];
  /** Past this the action's process group is killed and it fails, s. */
  timeoutSeconds: number;
}

/** A prepared action, or why the action's fields cannot be run (status 1, the message as stderr). */
export type PreparedAction<P> = { ok: true; value: P } | { ok: false; error: string };

/**
 * What an automator that runs one command per service action defines; `createActionAutomator` does the rest: where
 * the node's actions run (on the node over SSH, or on the provisioner host in the tenant's sandbox when the node's
 * provider declares `capabilities.localActions`), BOOTSTRAP's copy of the synced resources, the transient files,
 * timeouts and the outcome.
 */
export interface ActionAutomatorDefinition<P> {
  spec: PluginSpec;
  /** The resource types BOOTSTRAP copies to a remote node (only what changed), to `/var/lib/corral/resources/<name>/<type>`. */
  resourceTypes: readonly string[];
  /** Reads the action's fields, before anything runs anywhere. */
  prepare(ctx: PluginContext, action: ServiceActionCall): PreparedAction<P>;
  /** What to run for a prepared action at its place. */
  run(ctx: PluginContext, action: ServiceActionCall, prepared: P, place: ActionPlace): ActionRun;
  /** Local actions only: why this host cannot run the automator's actions (a missing tool), or undefined. */
  localUnavailable?(ctx: PluginContext): Promise<string | undefined>;
  /** Remote BOOTSTRAP only: a command that must succeed on the node first, and what a failure means. */
  remoteCheck?: { command: string; failure(ctx: PluginContext): string };
}

export interface ActionAutomatorOptions {
  /** How real nodes are reached (the provisioner's `host.ssh`). Without it, actions of remote nodes fail. */
  remote?: RemoteAccess;
  /** Where actions of local nodes run. @default defaultSandbox() */
  sandbox?: LocalSandbox;
}

const REMOTE_CHECK_TIMEOUT_S = 30;

/**
 * An automator from its definition: the one remote-or-sandbox skeleton behind `shell` and `chef-solo`, for any
 * automator that runs a command per service action. `close` closes the SSH pool it was given (closing is
 * idempotent).
 */
export function createActionAutomator<P>(definition: ActionAutomatorDefinition<P>, options: ActionAutomatorOptions = {}): AutomatorPlugin {
  const name = definition.spec.name;
  const { remote } = options;
  const sandbox = options.sandbox ?? defaultSandbox();
  const failed = (message: string): PluginOutcome => ({ status: 1, stderr: `${name}: ${message}\n` });
  const noRemote = (ctx: PluginContext) =>
    failed(`node ${ctx.task.config.hostname} is a real machine, and this provisioner was started without SSH access`);
  const localResources = (ctx: PluginContext) => (type: string) => resourceDir(ctx.workDir, ctx.tenant, "automatortypes", name, type);
  const remoteResources = (type: string) => remoteResourceDir(name, type);

  /** The tenant's sandbox and the node's directory in it, or the outcome that ends the task. */
  const localNode = async (ctx: PluginContext): Promise<{ box: TenantSandbox; dir: string } | { outcome: PluginOutcome }> => {
    const unavailable = await definition.localUnavailable?.(ctx);
    if (unavailable) return { outcome: { status: 1, stderr: unavailable } };
    const box = await sandbox.forActions(ctx.workDir, ctx.tenant);
    if ("refused" in box) return { outcome: failed(box.refused) };
    return { box, dir: await box.nodeDir(ctx.task.clusterId, ctx.task.nodeId) };
  };

  const remoteBootstrap = (ctx: PluginContext, access: RemoteAccess) =>
    withRemoteNode(access, ctx, `${name} bootstrap`, async (node) => {
      if (definition.remoteCheck) {
        const check = await node.run({ command: definition.remoteCheck.command, timeoutMs: REMOTE_CHECK_TIMEOUT_S * 1000, signal: ctx.signal });
        if (check.exitCode !== 0) {
          const { note } = remoteStatus(check, `${name} bootstrap`, REMOTE_CHECK_TIMEOUT_S);
          return { status: 1, stderr: note || definition.remoteCheck.failure(ctx) };
        }
      }
      // The work directories and every resource type's listing in one command: one exec channel per node.
      const types = definition.resourceTypes;
      const pairs = types.map((type) => ({ localDir: localResources(ctx)(type), remoteDir: remoteResources(type) }));
      const reports = await syncDirectories(node, pairs, ctx.signal, prepareWorkDirs);
      let stdout = "";
      for (const [i, report] of reports.entries()) {
        stdout += `${name} ${types[i]}: ${report.sent} sent, ${report.removed} removed, ${report.unchanged} unchanged\n`;
      }
      return { status: 0, stdout: stdout + `work directory ${REMOTE_WORK_DIR} ready on ${node.target.host}\n` };
    });

  const remoteAction = (ctx: PluginContext, action: ServiceActionCall, prepared: P, access: RemoteAccess) =>
    withRemoteNode(access, ctx, name, async (node) => {
      const place: ActionPlace = { where: "remote", workDir: REMOTE_WORK_DIR, runDir: REMOTE_RUN_DIR, resourceDir: remoteResources };
      const run = definition.run(ctx, action, prepared, place);
      const ran = await node.run({
        script: remoteActionScript({ files: run.files, env: definedOnly(run.env), cwd: place.workDir, command: run.command }),
        timeoutMs: run.timeoutSeconds * 1000,
        signal: ctx.signal,
        cleanupAfterKill: removeFilesCommand(run.files),
      });
      const { status, note } = remoteStatus(ran, name, run.timeoutSeconds);
      return { status, stdout: ran.stdout.text(), stderr: ran.stderr.text() + note };
    });

  const localAction = async (ctx: PluginContext, action: ServiceActionCall, prepared: P): Promise<PluginOutcome> => {
    const node = await localNode(ctx);
    if ("outcome" in node) return node.outcome;
    const place: ActionPlace = { where: "local", workDir: node.dir, runDir: node.dir, resourceDir: localResources(ctx) };
    const run = definition.run(ctx, action, prepared, place);
    try {
      for (const file of run.files) await node.box.writeFile(file.path, file.content);
      const ran = await node.box.run({ command: run.command, cwd: node.dir, env: run.env, timeoutMs: run.timeoutSeconds * 1000, signal: ctx.signal });
      let stderr = ran.stderr;
      if (ran.isTimedOut) stderr += `\n[corral] ${name}: timed out after ${run.timeoutSeconds} s; its process group was killed\n`;
      else if (ran.signal) stderr += `\n[corral] ${name}: killed by ${ran.signal}\n`;
      return { status: exitStatus(ran), stdout: ran.stdout, stderr };
    } finally {
      await Promise.all(run.files.map((file) => rm(file.path, { force: true })));
    }
  };

  return {
    kind: "automatortypes",
    spec: definition.spec,
    async bootstrap(ctx) {
      if (!runsActionsLocally(ctx)) return remote ? remoteBootstrap(ctx, remote) : noRemote(ctx);
      const node = await localNode(ctx);
      if ("outcome" in node) return node.outcome;
      return { status: 0, stdout: `node directory ${node.dir} ready\n` };
    },
    async runAction(ctx, action) {
      const prepared = definition.prepare(ctx, action);
      if (!prepared.ok) return { status: 1, stderr: prepared.error };
      if (!runsActionsLocally(ctx)) return remote ? remoteAction(ctx, action, prepared.value, remote) : noRemote(ctx);
      return localAction(ctx, action, prepared.value);
    },
    ...(remote ? { close: () => remote.pool.close() } : {}),
  };
}

function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

