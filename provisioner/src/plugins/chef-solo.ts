import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { PluginSpec } from "@corral/shared";
import { nodeDir, pathSegment, resourceDir } from "../paths.js";
import { isOnPath, runShell } from "./process.js";
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

export interface ChefSoloAutomatorOptions {
  /** PATH searched for `chef-solo`. @default process.env.PATH */
  pathEnv?: string;
}

const UNAVAILABLE = "chef-solo is not available on this provisioner";

/**
 * The `chef-solo` automator. Without `chef-solo` on the PATH every task fails with status 1 and a clear message;
 * with it, an action runs `chef-solo -c <config> -j <attributes> -o <run_list>` locally in the node directory
 * (no SSH). The config points chef-solo at the tenant's synced `cookbooks`, `data_bags` and `roles` (plugin
 * resources, see resource-sync.ts).
 */
export function createChefSoloAutomator(options: ChefSoloAutomatorOptions = {}): AutomatorPlugin {
  const pathEnv = () => options.pathEnv ?? process.env["PATH"];
  return {
    kind: "automatortypes",
    spec: CHEF_SOLO_SPEC,
    async bootstrap(ctx) {
      if (!(await isOnPath("chef-solo", pathEnv()))) return { status: 1, stderr: UNAVAILABLE };
      await mkdir(dir(ctx), { recursive: true });
      return { status: 0 };
    },
    async runAction(ctx, action) {
      if (!(await isOnPath("chef-solo", pathEnv()))) return { status: 1, stderr: UNAVAILABLE };
      return runChefSolo(ctx, action, pathEnv());
    },
  };
}

const dir = (ctx: PluginContext) => nodeDir(ctx.workDir, ctx.tenant, ctx.task.clusterId, ctx.task.nodeId);

/** A Ruby single-quoted string literal (no interpolation; only `\` and `'` need escaping). */
const rubyString = (s: string) => `'${s.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

/** chef-solo's configuration: the tenant's synced resources, and a cache inside the node directory. */
function soloConfig(ctx: PluginContext, workDir: string): string {
  const synced = (type: string) => rubyString(resourceDir(ctx.workDir, ctx.tenant, "automatortypes", CHEF_SOLO_SPEC.name, type));
  return [
    `cookbook_path [${synced("cookbooks")}]`,
    `data_bag_path ${synced("data_bags")}`,
    `role_path ${synced("roles")}`,
    `file_cache_path ${rubyString(join(workDir, "chef-cache"))}`,
    "",
  ].join("\n");
}

async function runChefSolo(ctx: PluginContext, action: ServiceActionCall, pathEnv: string | undefined): Promise<PluginOutcome> {
  const runList = String(action.fields["run_list"] ?? "").replace(/\s+/g, "");
  if (!runList) return { status: 1, stderr: `chef-solo: the action ${action.name} of service ${action.service} has no run_list` };
  let serviceData: Record<string, unknown> = {};
  const rawAttributes = String(action.fields["json_attributes"] ?? "").trim();
  if (rawAttributes) {
    try {
      serviceData = JSON.parse(rawAttributes) as Record<string, unknown>;
    } catch (err) {
      return { status: 1, stderr: `chef-solo: json_attributes is not valid JSON: ${(err as Error).message}` };
    }
  }
  const { config } = ctx.task;
  // The attribute layout of the reference (coopr-provisioner.md 4.3), with the full `coopr` object.
  const cluster = { ...config.cluster, ...serviceData, nodes: config.nodes ?? {} };
  const attributes = {
    ...cluster,
    coopr: {
      ...(typeof serviceData["coopr"] === "object" && serviceData["coopr"] !== null ? serviceData["coopr"] : {}),
      cluster,
      services: config.services,
      hostname: config.hostname,
      clusterId: ctx.task.clusterId,
      ipaddresses: config.ipaddresses,
    },
  };
  const workDir = dir(ctx);
  await mkdir(workDir, { recursive: true });
  const base = join(workDir, `chef-${pathSegment(ctx.task.taskId)}-${ctx.task.dispatch}`);
  const file = `${base}.json`;
  const configFile = `${base}.rb`;
  await writeFile(file, JSON.stringify(attributes), { mode: 0o600 });
  await writeFile(configFile, soloConfig(ctx, workDir), { mode: 0o600 });
  try {
    const ran = await runShell({
      command: 'chef-solo --no-color -c "$CORRAL_CHEF_CONFIG" -j "$CORRAL_CHEF_JSON" -o "$CORRAL_CHEF_RUN_LIST"',
      cwd: workDir,
      env: { ...process.env, PATH: pathEnv, CORRAL_CHEF_CONFIG: configFile, CORRAL_CHEF_JSON: file, CORRAL_CHEF_RUN_LIST: runList },
      timeoutMs: 1800_000,
      signal: ctx.signal,
    });
    const status = ran.exitCode === 0 && !ran.isTimedOut ? 0 : ran.exitCode || 1;
    return { status, stdout: ran.stdout, stderr: ran.stderr };
  } finally {
    await rm(file, { force: true });
    await rm(configFile, { force: true });
  }
}
