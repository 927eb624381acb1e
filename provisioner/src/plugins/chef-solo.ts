import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { JsonObject, PluginSpec } from "@corral/contracts";
import { resourceDir } from "../paths.js";
import { defaultSandbox, type LocalSandbox } from "../sandbox/index.js";
import { isRemoteNode } from "../ssh/node-target.js";
import { remoteStatus } from "../ssh/remote-exec.js";
import { runChecked, syncDirectory } from "../ssh/remote-files.js";
import { prepareWorkDirs, REMOTE_RUN_DIR, REMOTE_WORK_DIR, remoteResourceDir, withRemoteNode, type RemoteAccess } from "../ssh/remote-node.js";
import { taskFileName } from "./action-env.js";
import { exitStatus, isOnPath } from "./process.js";
import { remoteActionScript, removeFilesCommand } from "./remote-script.js";
import type { AutomatorPlugin, PluginContext, PluginOutcome, ServiceActionCall } from "./types.js";

export const CHEF_SOLO_SPEC: PluginSpec = {
  name: "chef-solo",
  description: "Automate all the things with chef-solo",
  resourceTypes: {
    cookbooks: { format: "archive" },
    data_bags: { format: "archive" },
    roles: { format: "file" },
  },
  parameters: {
    admin: {
      fields: {
        run_list: { label: "run-list", override: false, type: "text", tip: "The chef-solo run-list for this action" },
        json_attributes: {
          label: "JSON attributes",
          override: false,
          type: "text",
          tip: "Custom JSON data for this chef-solo run",
        },
      },
      required: [["run_list"]],
    },
  },
};

const RESOURCE_TYPES = ["cookbooks", "data_bags", "roles"] as const;
type ChefResourceType = (typeof RESOURCE_TYPES)[number];
const ACTION_TIMEOUT_S = 1800;
const CHEF_COMMAND = 'chef-solo --no-color -c "$CORRAL_CHEF_CONFIG" -j "$CORRAL_CHEF_JSON" -o "$CORRAL_CHEF_RUN_LIST"';

export interface ChefSoloAutomatorOptions {
  /** PATH searched for `chef-solo` on the provisioner host (sim nodes). @default process.env.PATH */
  pathEnv?: string;
  /** How real nodes are reached. Without it, actions of nodes that are not `sim` nodes fail. */
  remote?: RemoteAccess;
  /** Where actions of `sim` nodes run. @default defaultSandbox() */
  sandbox?: LocalSandbox;
}

const UNAVAILABLE = "chef-solo is not available on this provisioner";

/**
 * The `chef-solo` automator: an action runs `chef-solo -c <config> -j <attributes> -o <run_list>`, the config
 * pointing at the tenant's synced `cookbooks`, `data_bags` and `roles`.
 *
 * - On a real node it runs over SSH; BOOTSTRAP checks that chef-solo is installed there and copies the synced
 *   resources to `/var/lib/corral/resources/chef-solo/` (only what changed). Nothing is installed from the
 *   internet: the node's image must carry Chef.
 * - On a `sim` node it runs on the provisioner host, in the tenant's sandbox (`LocalSandbox`); status 1 with a
 *   clear message when chef-solo is missing.
 */
export function createChefSoloAutomator(options: ChefSoloAutomatorOptions = {}): AutomatorPlugin {
  const pathEnv = () => options.pathEnv ?? process.env["PATH"];
  const remote = options.remote;
  const sandbox = options.sandbox ?? defaultSandbox();
  return {
    kind: "automatortypes",
    spec: CHEF_SOLO_SPEC,
    async bootstrap(ctx) {
      if (isRemoteNode(ctx.task)) return remote ? remoteBootstrap(ctx, remote) : noRemote(ctx);
      if (!(await isOnPath("chef-solo", pathEnv()))) return { status: 1, stderr: UNAVAILABLE };
      const box = await sandbox.forActions(ctx.workDir, ctx.tenant);
      if ("refused" in box) return refused(box.refused);
      await box.nodeDir(ctx.task.clusterId, ctx.task.nodeId);
      return { status: 0 };
    },
    async runAction(ctx, action) {
      const prepared = prepareRun(ctx, action);
      if ("error" in prepared) return { status: 1, stderr: prepared.error };
      if (isRemoteNode(ctx.task)) return remote ? remoteAction(ctx, prepared, remote) : noRemote(ctx);
      if (!(await isOnPath("chef-solo", pathEnv()))) return { status: 1, stderr: UNAVAILABLE };
      return localAction(ctx, prepared, pathEnv(), sandbox);
    },
    ...(remote ? { close: () => remote.pool.close() } : {}),
  };
}

const noRemote = (ctx: PluginContext): PluginOutcome => ({
  status: 1,
  stderr: `chef-solo: node ${ctx.task.config.hostname} is a real machine, and this provisioner was started without SSH access\n`,
});

const refused = (reason: string): PluginOutcome => ({ status: 1, stderr: `chef-solo: ${reason}\n` });
const localResources = (ctx: PluginContext, type: ChefResourceType) =>
  resourceDir(ctx.workDir, ctx.tenant, "automatortypes", CHEF_SOLO_SPEC.name, type);

/** A Ruby single-quoted string literal (no interpolation; only `\` and `'` need escaping). */
const rubyString = (s: string) => `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

/** chef-solo's configuration: where the resources are, and a cache in the work directory. */
function soloConfig(resourcePath: (type: ChefResourceType) => string, workDir: string): string {
  return [
    `cookbook_path [${rubyString(resourcePath("cookbooks"))}]`,
    `data_bag_path ${rubyString(resourcePath("data_bags"))}`,
    `role_path ${rubyString(resourcePath("roles"))}`,
    `file_cache_path ${rubyString(join(workDir, "chef-cache"))}`,
    "",
  ].join("\n");
}

interface PreparedRun {
  runList: string;
  attributes: string;
}

/** The run list and the attribute JSON (Coopr's layout, with the full `coopr` attribute). */
function prepareRun(ctx: PluginContext, action: ServiceActionCall): PreparedRun | { error: string } {
  const runList = String(action.fields["run_list"] ?? "").replace(/\s+/g, "");
  if (!runList) return { error: `chef-solo: the action ${action.name} of service ${action.service} has no run_list` };
  let serviceData: JsonObject = {};
  const rawAttributes = String(action.fields["json_attributes"] ?? "").trim();
  if (rawAttributes) {
    try {
      const parsed: unknown = JSON.parse(rawAttributes);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return { error: "chef-solo: json_attributes must be a JSON object" };
      serviceData = parsed as JsonObject;
    } catch (err) {
      return { error: `chef-solo: json_attributes is not valid JSON: ${(err as Error).message}` };
    }
  }
  const { config } = ctx.task;
  const cluster = { ...config.cluster, ...serviceData, nodes: config.nodes ?? {} };
  const ownCoopr = serviceData["coopr"];
  const attributes = {
    ...cluster,
    coopr: {
      ...(typeof ownCoopr === "object" && ownCoopr !== null && !Array.isArray(ownCoopr) ? ownCoopr : {}),
      cluster,
      services: config.services,
      hostname: config.hostname,
      clusterId: ctx.task.clusterId,
      ipaddresses: config.ipaddresses,
    },
  };
  return { runList, attributes: JSON.stringify(attributes) };
}

function remoteBootstrap(ctx: PluginContext, remote: RemoteAccess): Promise<PluginOutcome> {
  return withRemoteNode(remote, ctx, "chef-solo bootstrap", async (node) => {
    const check = await node.run({ command: "command -v chef-solo", timeoutMs: 30_000, signal: ctx.signal });
    if (check.exitCode !== 0) {
      const { note } = remoteStatus(check, "chef-solo bootstrap", 30);
      return { status: 1, stderr: note || `chef-solo is not installed on ${ctx.task.config.hostname}; use an image that carries Chef\n` };
    }
    await runChecked(node, prepareWorkDirs, ctx.signal, "creating the work directories");
    let stdout = "";
    for (const type of RESOURCE_TYPES) {
      const report = await syncDirectory(node, localResources(ctx, type), remoteResourceDir(CHEF_SOLO_SPEC.name, type), ctx.signal);
      stdout += `chef-solo ${type}: ${report.sent} sent, ${report.removed} removed, ${report.unchanged} unchanged\n`;
    }
    return { status: 0, stdout };
  });
}

function remoteAction(ctx: PluginContext, run: PreparedRun, remote: RemoteAccess): Promise<PluginOutcome> {
  return withRemoteNode(remote, ctx, "chef-solo", async (node) => {
    const json = { path: `${REMOTE_RUN_DIR}/${taskFileName(ctx.task, "chef", "json")}`, content: run.attributes };
    const config = {
      path: `${REMOTE_RUN_DIR}/${taskFileName(ctx.task, "chef", "rb")}`,
      content: soloConfig((type) => remoteResourceDir(CHEF_SOLO_SPEC.name, type), REMOTE_WORK_DIR),
    };
    const script = remoteActionScript({
      files: [json, config],
      env: { CORRAL_CHEF_CONFIG: config.path, CORRAL_CHEF_JSON: json.path, CORRAL_CHEF_RUN_LIST: run.runList },
      cwd: REMOTE_WORK_DIR,
      command: CHEF_COMMAND,
    });
    const ran = await node.run({
      script,
      timeoutMs: ACTION_TIMEOUT_S * 1000,
      signal: ctx.signal,
      cleanupAfterKill: removeFilesCommand([json, config]),
    });
    const { status, note } = remoteStatus(ran, "chef-solo", ACTION_TIMEOUT_S);
    return { status, stdout: ran.stdout.text(), stderr: ran.stderr.text() + note };
  });
}

async function localAction(ctx: PluginContext, run: PreparedRun, pathEnv: string | undefined, sandbox: LocalSandbox): Promise<PluginOutcome> {
  const box = await sandbox.forActions(ctx.workDir, ctx.tenant);
  if ("refused" in box) return refused(box.refused);
  const workDir = await box.nodeDir(ctx.task.clusterId, ctx.task.nodeId);
  const file = join(workDir, taskFileName(ctx.task, "chef", "json"));
  const configFile = join(workDir, taskFileName(ctx.task, "chef", "rb"));
  await box.writeFile(file, run.attributes);
  await box.writeFile(configFile, soloConfig((type) => localResources(ctx, type), workDir));
  try {
    const ran = await box.run({
      command: CHEF_COMMAND,
      cwd: workDir,
      env: { PATH: pathEnv, CORRAL_CHEF_CONFIG: configFile, CORRAL_CHEF_JSON: file, CORRAL_CHEF_RUN_LIST: run.runList },
      timeoutMs: ACTION_TIMEOUT_S * 1000,
      signal: ctx.signal,
    });
    const status = exitStatus(ran);
    return { status, stdout: ran.stdout, stderr: ran.stderr };
  } finally {
    await rm(file, { force: true });
    await rm(configFile, { force: true });
  }
}
