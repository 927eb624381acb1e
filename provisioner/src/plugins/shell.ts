import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { PluginSpec } from "@corral/shared";
import { nodeDir, pathSegment, resourceDir } from "../paths.js";
import { runShell } from "./process.js";
import type { AutomatorPlugin, PluginContext, PluginOutcome, ServiceActionCall } from "./types.js";

export const SHELL_SPEC: PluginSpec = {
  name: "shell",
  description: "Runs a script or command for each service action, on the provisioner host, in a per-node directory",
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

export interface ShellAutomatorOptions {
  /** Timeout of an action without a `timeout_s` field, in seconds. @default 600 */
  defaultTimeoutSeconds?: number;
}

/**
 * The `shell` automator: an action runs `/bin/sh -c "<script> <args>"` in
 * `<workDir>/<tenant>/nodes/<clusterId>/<nodeId>`, with the task in its environment and in a JSON file
 * (`CORRAL_TASK_FILE`, mode 0600, removed afterwards since it holds provider credentials). The tenant's synced
 * `scripts` resources are on the PATH. BOOTSTRAP only creates the node directory.
 */
export function createShellAutomator(options: ShellAutomatorOptions = {}): AutomatorPlugin {
  const defaultTimeoutSeconds = options.defaultTimeoutSeconds ?? 600;
  return {
    kind: "automatortypes",
    spec: SHELL_SPEC,
    async bootstrap(ctx) {
      const dir = taskNodeDir(ctx);
      await mkdir(dir, { recursive: true });
      return { status: 0, stdout: `node directory ${dir} ready\n` };
    },
    runAction: (ctx, action) => runAction(ctx, action, defaultTimeoutSeconds),
  };
}

function taskNodeDir(ctx: PluginContext): string {
  return nodeDir(ctx.workDir, ctx.tenant, ctx.task.clusterId, ctx.task.nodeId);
}

async function runAction(ctx: PluginContext, action: ServiceActionCall, defaultTimeoutSeconds: number): Promise<PluginOutcome> {
  const script = stringField(action.fields["script"]).trim();
  if (!script) return { status: 1, stderr: `shell: the action ${action.name} of service ${action.service} has no script field` };
  const args = stringField(action.fields["args"]);
  const rawTimeout = stringField(action.fields["timeout_s"]).trim();
  const timeoutSeconds = rawTimeout === "" ? defaultTimeoutSeconds : Number(rawTimeout);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) {
    return { status: 1, stderr: `shell: timeout_s must be a positive number of seconds, got "${rawTimeout}"` };
  }

  const { task } = ctx;
  const dir = taskNodeDir(ctx);
  await mkdir(dir, { recursive: true });
  const taskFile = join(dir, `task-${pathSegment(task.taskId)}-${task.dispatch}.json`);
  await writeFile(taskFile, JSON.stringify(task), { mode: 0o600 });
  const scripts = resourceDir(ctx.workDir, ctx.tenant, "automatortypes", SHELL_SPEC.name, "scripts");
  const ip = task.config.ipaddresses ?? {};
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: [scripts, process.env["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"].join(":"),
    CORRAL_TASK_FILE: taskFile,
    CORRAL_TASK_NAME: task.taskName,
    CORRAL_TASK_ID: task.taskId,
    CORRAL_DISPATCH: String(task.dispatch),
    CORRAL_TENANT: ctx.tenant,
    CORRAL_CLUSTER_ID: task.clusterId,
    CORRAL_NODE_ID: task.nodeId,
    CORRAL_HOSTNAME: task.config.hostname ?? "",
    CORRAL_SERVICE: action.service,
    CORRAL_IP: ip["access_v4"] ?? ip["bind_v4"] ?? "",
    CORRAL_PROVISIONER_ID: ctx.provisionerId,
    CORRAL_WORKER_ID: ctx.workerId,
  };
  try {
    const ran = await runShell({
      command: args ? `${script} ${args}` : script,
      cwd: dir,
      env,
      timeoutMs: timeoutSeconds * 1000,
      signal: ctx.signal,
    });
    let stderr = ran.stderr;
    if (ran.isTimedOut) stderr += `\n[corral] shell: timed out after ${timeoutSeconds} s; its process group was killed\n`;
    else if (ran.signal) stderr += `\n[corral] shell: killed by ${ran.signal}\n`;
    const status = ran.exitCode === 0 && !ran.isTimedOut ? 0 : ran.exitCode || 1;
    return { status, stdout: ran.stdout, stderr };
  } finally {
    await rm(taskFile, { force: true });
  }
}

function stringField(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : String(value);
}
