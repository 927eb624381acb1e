import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { PluginSpec } from "@corral/contracts";
import { resourceDir } from "../paths.js";
import { defaultSandbox, type LocalSandbox } from "../sandbox/index.js";
import { isRemoteNode } from "../ssh/node-target.js";
import { remoteStatus } from "../ssh/remote-exec.js";
import { runChecked, syncDirectory } from "../ssh/remote-files.js";
import { prepareWorkDirs, REMOTE_RUN_DIR, REMOTE_WORK_DIR, remoteResourceDir, withRemoteNode, type RemoteAccess } from "../ssh/remote-node.js";
import { actionTimeoutSeconds, actionVariables, taskFileName } from "./action-env.js";
import { exitStatus } from "./process.js";
import { remoteActionScript, removeFilesCommand } from "./remote-script.js";
import type { AutomatorPlugin, PluginContext, PluginOutcome, ServiceActionCall } from "./types.js";

export const SHELL_SPEC: PluginSpec = {
  name: "shell",
  description: "Runs a script or command for each service action on the node (over SSH; sim nodes on the provisioner host)",
  resourceTypes: {
    scripts: { format: "file", permissions: "0755" },
    archives: { format: "archive" },
  },
  parameters: {
    admin: {
      fields: {
        script: { label: "Script", override: false, type: "text", tip: "The script or command to run" },
        args: { label: "Arguments", override: false, type: "text", tip: "The arguments to the script" },
        timeout_s: {
          label: "Timeout (seconds)",
          override: false,
          type: "text",
          tip: "The action fails and its processes are killed past this many seconds (default 600)",
        },
      },
      required: [["script"]],
    },
  },
};

const RESOURCE_TYPES = ["scripts", "archives"] as const;

export interface ShellAutomatorOptions {
  /** Timeout of an action without a `timeout_s` field, in seconds. @default 600 */
  defaultTimeoutSeconds?: number;
  /** How real nodes are reached. Without it, actions of nodes that are not `sim` nodes fail. */
  remote?: RemoteAccess;
  /** Where actions of `sim` nodes run. @default defaultSandbox() */
  sandbox?: LocalSandbox;
}

/**
 * The `shell` automator: an action runs `/bin/sh -c "<script> <args>"` with the task in its environment and in a
 * JSON file (`CORRAL_TASK_FILE`, mode 0600, removed afterwards since it holds provider credentials), the
 * tenant's synced `scripts` on the PATH.
 *
 * - On a real node (see `isRemoteNode`) it runs over SSH as root in `/var/lib/corral/work`; BOOTSTRAP copies the
 *   tenant's `scripts` and `archives` to `/var/lib/corral/resources/shell/` (only what changed).
 * - On a `sim` node it runs on the provisioner host in `<workDir>/<tenant>/nodes/<clusterId>/<nodeId>`, in the
 *   tenant's sandbox (`LocalSandbox`).
 */
export function createShellAutomator(options: ShellAutomatorOptions = {}): AutomatorPlugin {
  const defaultTimeoutSeconds = options.defaultTimeoutSeconds ?? 600;
  const remote = options.remote;
  const sandbox = options.sandbox ?? defaultSandbox();
  return {
    kind: "automatortypes",
    spec: SHELL_SPEC,
    async bootstrap(ctx) {
      if (isRemoteNode(ctx.task)) return remote ? remoteBootstrap(ctx, remote) : noRemote(ctx);
      const box = await sandbox.forActions(ctx.workDir, ctx.tenant);
      if ("refused" in box) return refused(box.refused);
      const dir = await box.nodeDir(ctx.task.clusterId, ctx.task.nodeId);
      return { status: 0, stdout: `node directory ${dir} ready\n` };
    },
    async runAction(ctx, action) {
      const script = stringField(action.fields["script"]).trim();
      if (!script) return { status: 1, stderr: `shell: the action ${action.name} of service ${action.service} has no script field` };
      const args = stringField(action.fields["args"]);
      const timeout = actionTimeoutSeconds(action.fields["timeout_s"], defaultTimeoutSeconds);
      if (typeof timeout === "string") return { status: 1, stderr: `shell: ${timeout}` };
      const call: ShellCall = { command: args ? `${script} ${args}` : script, timeoutSeconds: timeout };
      if (isRemoteNode(ctx.task)) return remote ? remoteAction(ctx, action, call, remote) : noRemote(ctx);
      return localAction(ctx, action, call, sandbox);
    },
    ...(remote ? { close: () => remote.pool.close() } : {}),
  };
}

interface ShellCall {
  command: string;
  timeoutSeconds: number;
}

const noRemote = (ctx: PluginContext): PluginOutcome => ({
  status: 1,
  stderr: `shell: node ${ctx.task.config.hostname} is a real machine, and this provisioner was started without SSH access\n`,
});

const refused = (reason: string): PluginOutcome => ({ status: 1, stderr: `shell: ${reason}\n` });

const localResources = (ctx: PluginContext, type: string) => resourceDir(ctx.workDir, ctx.tenant, "automatortypes", SHELL_SPEC.name, type);

function remoteBootstrap(ctx: PluginContext, remote: RemoteAccess): Promise<PluginOutcome> {
  return withRemoteNode(remote, ctx, "shell bootstrap", async (node) => {
    await runChecked(node, prepareWorkDirs, ctx.signal, "creating the work directories");
    let stdout = "";
    for (const type of RESOURCE_TYPES) {
      const report = await syncDirectory(node, localResources(ctx, type), remoteResourceDir(SHELL_SPEC.name, type), ctx.signal);
      stdout += `shell ${type}: ${report.sent} sent, ${report.removed} removed, ${report.unchanged} unchanged\n`;
    }
    return { status: 0, stdout: stdout + `work directory ${REMOTE_WORK_DIR} ready on ${node.target.host}\n` };
  });
}

function remoteAction(ctx: PluginContext, action: ServiceActionCall, call: ShellCall, remote: RemoteAccess): Promise<PluginOutcome> {
  return withRemoteNode(remote, ctx, "shell", async (node) => {
    const taskFile = { path: `${REMOTE_RUN_DIR}/${taskFileName(ctx.task, "task", "json")}`, content: JSON.stringify(ctx.task) };
    const scripts = remoteResourceDir(SHELL_SPEC.name, "scripts");
    const script = remoteActionScript({
      files: [taskFile],
      env: {
        ...actionVariables(ctx, action, taskFile.path),
        CORRAL_ARCHIVES: remoteResourceDir(SHELL_SPEC.name, "archives"),
        PATH: `${scripts}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin` },
      cwd: REMOTE_WORK_DIR,
      command: call.command,
    });
    const ran = await node.run({
      script,
      timeoutMs: call.timeoutSeconds * 1000,
      signal: ctx.signal,
      cleanupAfterKill: removeFilesCommand([taskFile]),
    });
    const { status, note } = remoteStatus(ran, "shell", call.timeoutSeconds);
    return { status, stdout: ran.stdout.text(), stderr: ran.stderr.text() + note };
  });
}

async function localAction(ctx: PluginContext, action: ServiceActionCall, call: ShellCall, sandbox: LocalSandbox): Promise<PluginOutcome> {
  const box = await sandbox.forActions(ctx.workDir, ctx.tenant);
  if ("refused" in box) return refused(box.refused);
  const dir = await box.nodeDir(ctx.task.clusterId, ctx.task.nodeId);
  const taskFile = join(dir, taskFileName(ctx.task, "task", "json"));
  await box.writeFile(taskFile, JSON.stringify(ctx.task));
  const env: NodeJS.ProcessEnv = {
    ...actionVariables(ctx, action, taskFile),
    CORRAL_ARCHIVES: localResources(ctx, "archives"),
    PATH: [localResources(ctx, "scripts"), process.env["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"].join(":"),
  };
  try {
    const ran = await box.run({ command: call.command, cwd: dir, env, timeoutMs: call.timeoutSeconds * 1000, signal: ctx.signal });
    let stderr = ran.stderr;
    if (ran.isTimedOut) stderr += `\n[corral] shell: timed out after ${call.timeoutSeconds} s; its process group was killed\n`;
    else if (ran.signal) stderr += `\n[corral] shell: killed by ${ran.signal}\n`;
    const status = exitStatus(ran);
    return { status, stdout: ran.stdout, stderr };
  } finally {
    await rm(taskFile, { force: true });
  }
}

function stringField(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : String(value);
}
