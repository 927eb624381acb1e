import type { PluginSpec } from "@corral/contracts";
import type { LocalSandbox } from "../sandbox/index.js";
import type { RemoteAccess } from "../ssh/remote-node.js";
import { createActionAutomator, type ActionAutomatorDefinition } from "./action-automator.js";
import { actionTimeoutSeconds, actionVariables, taskFileName } from "./action-env.js";
import type { AutomatorPlugin } from "./types.js";

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

export interface ShellAutomatorOptions {
  /** Timeout of an action without a `timeout_s` field, in seconds. @default 600 */
  defaultTimeoutSeconds?: number;
  /** How real nodes are reached. Without it, actions of nodes that are not local fail. */
  remote?: RemoteAccess;
  /** Where actions of local nodes (providers declaring `capabilities.localActions`, such as `sim`) run. @default defaultSandbox() */
  sandbox?: LocalSandbox;
}

/** The system part of an action's PATH on a node (locally: the provisioner's PATH). */
const NODE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * The `shell` automator: an action runs `/bin/sh -c "<script> <args>"` with the task in its environment and in a
 * JSON file (`CORRAL_TASK_FILE`, mode 0600, removed afterwards since it holds provider credentials), the
 * tenant's synced `scripts` on the PATH and its `archives` at `CORRAL_ARCHIVES`.
 *
 * - On a real node it runs over SSH as root in `/var/lib/corral/work`; BOOTSTRAP copies the tenant's `scripts` and
 *   `archives` to `/var/lib/corral/resources/shell/` (only what changed).
 * - On a node whose provider declares `capabilities.localActions` (`sim`) it runs on the provisioner host in
 *   `<workDir>/<tenant>/nodes/<clusterId>/<nodeId>`, in the tenant's sandbox (`LocalSandbox`).
 */
export function createShellAutomator(options: ShellAutomatorOptions = {}): AutomatorPlugin {
  const defaultTimeoutSeconds = options.defaultTimeoutSeconds ?? 600;
  const definition: ActionAutomatorDefinition<{ command: string; timeoutSeconds: number }> = {
    spec: SHELL_SPEC,
    resourceTypes: ["scripts", "archives"],
    prepare(_ctx, action) {
      const script = stringField(action.fields["script"]).trim();
      if (!script) return { ok: false, error: `shell: the action ${action.name} of service ${action.service} has no script field` };
      const args = stringField(action.fields["args"]);
      const timeout = actionTimeoutSeconds(action.fields["timeout_s"], defaultTimeoutSeconds);
      if (typeof timeout === "string") return { ok: false, error: `shell: ${timeout}` };
      return { ok: true, value: { command: args ? `${script} ${args}` : script, timeoutSeconds: timeout } };
    },
    run(ctx, action, call, place) {
      const taskFile = { path: `${place.runDir}/${taskFileName(ctx.task, "task", "json")}`, content: JSON.stringify(ctx.task) };
      const systemPath = place.where === "remote" ? NODE_PATH : (process.env["PATH"] ?? "/usr/local/bin:/usr/bin:/bin");
      return {
        command: call.command,
        env: {
          ...actionVariables(ctx, action, taskFile.path),
          CORRAL_ARCHIVES: place.resourceDir("archives"),
          PATH: `${place.resourceDir("scripts")}:${systemPath}`,
        },
        files: [taskFile],
        timeoutSeconds: call.timeoutSeconds,
      };
    },
  };
  return createActionAutomator(definition, options);
}

function stringField(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : String(value);
}
