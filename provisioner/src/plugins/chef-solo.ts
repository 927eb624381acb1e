import { join } from "node:path";
import type { JsonObject, PluginSpec } from "@corral/contracts";
import type { LocalSandbox } from "../sandbox/index.js";
import type { RemoteAccess } from "../ssh/remote-node.js";
import { createActionAutomator, type PreparedAction } from "./action-automator.js";
import { taskFileName } from "./action-env.js";
import { isOnPath } from "./process.js";
import type { AutomatorPlugin, PluginContext, ServiceActionCall } from "./types.js";

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
  /** PATH searched for `chef-solo` on the provisioner host (local nodes). @default process.env.PATH */
  pathEnv?: string;
  /** How real nodes are reached. Without it, actions of nodes that are not local fail. */
  remote?: RemoteAccess;
  /** Where actions of local nodes (providers declaring `capabilities.localActions`, such as `sim`) run. @default defaultSandbox() */
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
 * - On a node whose provider declares `capabilities.localActions` (`sim`) it runs on the provisioner host, in the
 *   tenant's sandbox (`LocalSandbox`); status 1 with a clear message when chef-solo is missing.
 */
export function createChefSoloAutomator(options: ChefSoloAutomatorOptions = {}): AutomatorPlugin {
  const pathEnv = () => options.pathEnv ?? process.env["PATH"];
  return createActionAutomator<PreparedRun>(
    {
      spec: CHEF_SOLO_SPEC,
      resourceTypes: RESOURCE_TYPES,
      prepare: prepareRun,
      run(ctx, _action, prepared, place) {
        const json = { path: join(place.runDir, taskFileName(ctx.task, "chef", "json")), content: prepared.attributes };
        const config = {
          path: join(place.runDir, taskFileName(ctx.task, "chef", "rb")),
          content: soloConfig((type) => place.resourceDir(type), place.workDir),
        };
        return {
          command: CHEF_COMMAND,
          env: {
            ...(place.where === "local" ? { PATH: pathEnv() } : {}),
            CORRAL_CHEF_CONFIG: config.path,
            CORRAL_CHEF_JSON: json.path,
            CORRAL_CHEF_RUN_LIST: prepared.runList,
          },
          files: [json, config],
          timeoutSeconds: ACTION_TIMEOUT_S,
        };
      },
      localUnavailable: async () => ((await isOnPath("chef-solo", pathEnv())) ? undefined : UNAVAILABLE),
      remoteCheck: {
        command: "command -v chef-solo",
        failure: (ctx) => `chef-solo is not installed on ${ctx.task.config.hostname}; use an image that carries Chef\n`,
      },
    },
    options,
  );
}

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
function prepareRun(ctx: PluginContext, action: ServiceActionCall): PreparedAction<PreparedRun> {
  const runList = String(action.fields["run_list"] ?? "").replace(/\s+/g, "");
  if (!runList) return { ok: false, error: `chef-solo: the action ${action.name} of service ${action.service} has no run_list` };
  let serviceData: JsonObject = {};
  const rawAttributes = String(action.fields["json_attributes"] ?? "").trim();
  if (rawAttributes) {
    try {
      const parsed: unknown = JSON.parse(rawAttributes);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return { ok: false, error: "chef-solo: json_attributes must be a JSON object" };
      serviceData = parsed as JsonObject;
    } catch (err) {
      return { ok: false, error: `chef-solo: json_attributes is not valid JSON: ${(err as Error).message}` };
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
  return { ok: true, value: { runList, attributes: JSON.stringify(attributes) } };
}
