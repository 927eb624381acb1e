/**
 * `corral clusters nodes add|remove|replace`: day-two changes of a live cluster's nodes, each run as a plan.
 * `--dry-run` shows only the nodes that change and the plan's stages; `--wait` follows the plan like `watch`.
 */
import { restPath, type ClusterDetails, type DryRunResult, type JobStarted, type Method } from "@corral/contracts";
import { UsageError } from "../errors.js";
import { parseDocument, readDocument } from "../input-files.js";
import { layoutChangeView } from "../output/cluster-views.js";
import { isPlainObject } from "../output/table.js";
import { followJob } from "../progress/follow-job.js";
import { DRY_RUN_OPTION, JOB_OPTIONS } from "./endpoint-commands.js";
import { flag, positiveIntegerOption, stringOption, type Command, type CommandContext, type CommandInput, type CommandOutcome, type OptionSpecs } from "./command.js";

/** What every node change takes: the restart of the services whose config it changes, provider fields, wait, dry run. */
const CHANGE_OPTIONS = {
  restart: { type: "boolean", description: "also restart the services whose config the change touches (all of their nodes at once unless --rolling)" },
  rolling: { type: "string", valueName: "n", description: "restart in batches: at most n nodes of each service down at a time (implies --restart)" },
  "provider-fields": { type: "string", valueName: "json|@file", description: "values of the provider type's user fields, for this request only" },
  ...JOB_OPTIONS,
  ...DRY_RUN_OPTION,
} as const satisfies OptionSpecs;

interface NodeRequest {
  method: Method;
  path: string;
  body: Record<string, unknown>;
}

export const nodesAddCommand: Command = {
  words: ["clusters", "nodes", "add"],
  summary: "POST /clusters/:id/nodes (user): add --count nodes; the solver picks their services unless --services names them",
  args: ["<cluster-id>"],
  options: {
    count: { type: "string", short: "n", valueName: "n", description: "how many nodes to add (required)" },
    services: { type: "string", valueName: "a,b,...", description: "exactly these services on every new node (default: the solver's choice)" },
    hardwaretype: { type: "string", valueName: "name", description: "hardware type of the new nodes (default: the template's)" },
    imagetype: { type: "string", valueName: "name", description: "image type of the new nodes (default: the template's)" },
    ...CHANGE_OPTIONS,
  },
  async run(ctx, input) {
    const [clusterId = ""] = input.positionals;
    const count = positiveIntegerOption(input, "count");
    if (count === undefined) throw new UsageError("nodes add needs --count <n>");
    const services = stringOption(input, "services");
    const body = {
      numMachines: count,
      ...(services !== undefined ? { services: services.split(",").map((s) => s.trim()).filter((s) => s !== "") } : {}),
      ...optional("hardwaretype", stringOption(input, "hardwaretype")),
      ...optional("imagetype", stringOption(input, "imagetype")),
      ...(await changeFields(ctx, input)),
    };
    return runNodeChange(ctx, input, clusterId, { ...restPath("clusters.addNodes", { id: clusterId }), body }, `adding ${count} node${count === 1 ? "" : "s"}`);
  },
};

export const nodesRemoveCommand: Command = {
  words: ["clusters", "nodes", "remove"],
  summary: "POST /clusters/:id/nodes/remove (user): remove nodes in one plan, their services stopped in dependency order; refused (exit 3) when the cluster would break a constraint",
  args: ["<cluster-id>", "<node-id>..."],
  options: CHANGE_OPTIONS,
  async run(ctx, input) {
    const [clusterId = "", ...nodes] = input.positionals;
    const body = { nodes, ...(await changeFields(ctx, input)) };
    return runNodeChange(ctx, input, clusterId, { ...restPath("clusters.removeNodes", { id: clusterId }), body }, `removing ${nodes.join(", ")}`);
  },
};

export const nodesReplaceCommand: Command = {
  words: ["clusters", "nodes", "replace"],
  summary: "POST /clusters/:id/nodes/:nodeId/replace (user): a new machine of the same types and services, then the old one deleted",
  args: ["<cluster-id>", "<node-id>"],
  options: CHANGE_OPTIONS,
  async run(ctx, input) {
    const [clusterId = "", nodeId = ""] = input.positionals;
    const request = { ...restPath("clusters.replaceNode", { id: clusterId, nodeId }), body: await changeFields(ctx, input) };
    return runNodeChange(ctx, input, clusterId, request, `replacing ${nodeId}`);
  },
};

/** The request, then: with --dry-run the layout change and plan; with --wait the plan followed to its end. */
async function runNodeChange(ctx: CommandContext, input: CommandInput, clusterId: string, request: NodeRequest, doing: string): Promise<CommandOutcome> {
  const client = ctx.client();
  if (flag(input, "dry-run")) {
    const before = await client.request<ClusterDetails>("GET", `/clusters/${encodeURIComponent(clusterId)}`);
    const result = await client.request<DryRunResult>(request.method, request.path, { body: request.body, query: { dryRun: "true" } });
    return { result: { value: result, table: () => layoutChangeView(before.nodes, result) } };
  }
  const started = await client.request<JobStarted>(request.method, request.path, { body: request.body });
  if (flag(input, "wait")) return followJob(ctx, clusterId);
  return { result: { value: started, table: () => `cluster ${clusterId}: ${doing}, plan ${started.planId} (corral watch ${clusterId} follows it)` } };
}

/** `restart`, `rolling` and `providerFields` of the body, from --restart, --rolling and --provider-fields. */
async function changeFields(ctx: CommandContext, input: CommandInput): Promise<Record<string, unknown>> {
  const maxUnavailable = positiveIntegerOption(input, "rolling");
  const restart = flag(input, "restart") || maxUnavailable !== undefined;
  const fieldsText = stringOption(input, "provider-fields");
  const providerFields = fieldsText === undefined ? undefined : fieldsText.startsWith("@") ? await readDocument(fieldsText.slice(1), ctx.stdin) : parseDocument(fieldsText, "--provider-fields");
  if (providerFields !== undefined && !isPlainObject(providerFields)) throw new UsageError("--provider-fields must be a JSON or YAML object");
  return {
    ...(restart ? { restart: true } : {}),
    ...(maxUnavailable !== undefined ? { rolling: { maxUnavailable } } : {}),
    ...optional("providerFields", providerFields),
  };
}

const optional = <K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>;
