/**
 * One command per REST endpoint of the endpoint table (contracts/src/endpoints/): its words come from the
 * endpoint's name, its arguments from the route's path parameters, its options from the body kind and request
 * schema. A new row of the table is a new command without a change here.
 *
 * Names: the service prefix `tenancy.` and `catalog.` are dropped; a name ending in verb+Noun reads noun verb
 * (`clusters.getConfig` -> `clusters config get`, `plugins.listVersions` -> `plugins versions list`); other
 * camelCase becomes kebab-case (`metrics.nodeUsage` -> `metrics node-usage`).
 */
import { endpointList, restPath, type DryRunResult, type Endpoint, type EndpointName, type RestBinding, type RestRoute } from "@corral/contracts";
import { ApiError, UsageError } from "../errors.js";
import { readBytes } from "../input-files.js";
import { BODY_OPTIONS, bodyOf, kebabCase, propertyOptionSpecs, propertyOptions, type PropertyOption } from "./body-options.js";
import { flag, listOption, stringOption, type Command, type CommandContext, type CommandInput, type CommandOutcome, type OptionSpecs } from "./command.js";
import { GLOBAL_OPTIONS } from "../command-line.js";
import { tableViewOf } from "./endpoint-views.js";

/** What a command of a cluster job does after its call: draw the job's progress (`--wait`), show a dry run. */
export interface JobHooks {
  /** Follows the cluster's job until it ends; the exit code says how it ended. */
  wait(ctx: CommandContext, clusterId: string): Promise<CommandOutcome>;
  /** How a dry run's answer looks as a table. */
  dryRunTable(value: DryRunResult): string;
}

/** Endpoints that start a cluster job: `--wait` follows it. (Those the table gives a `dryRunReply` get `--dry-run`.) */
const JOB_ENDPOINTS: ReadonlySet<EndpointName> = new Set<EndpointName>([
  "clusters.create",
  "clusters.delete",
  "clusters.putConfig",
  "clusters.addServices",
  "clusters.addNodes",
  "clusters.removeNode",
  "clusters.removeNodes",
  "clusters.replaceNode",
  "clusters.startServices",
  "clusters.stopServices",
  "clusters.restartServices",
]);

const VERBS = new Set(["get", "put", "add", "list", "start", "stop", "restart", "delete", "extend"]);

/** `tenancy.catalog.providers.get` -> `providers get`; `clusters.getConfig` -> `clusters config get`. */
export function commandWordsOf(name: string): string[] {
  const parts = name.split(".");
  const segments = parts[0] === "tenancy" ? parts.slice(1).filter((p, i) => !(i === 0 && p === "catalog")) : parts;
  return segments.flatMap((segment) => {
    const [verb, ...rest] = kebabCase(segment).split("-");
    if (verb !== undefined && rest.length === 1 && VERBS.has(verb)) return [rest[0] ?? "", verb];
    return [kebabCase(segment)];
  });
}

const QUERY_OPTION = {
  query: { type: "string", short: "q", multiple: true, valueName: "key=value", description: "query parameter (repeatable), e.g. status=active" },
} as const satisfies OptionSpecs;
export const JOB_OPTIONS = {
  wait: { type: "boolean", description: "follow the cluster's job until it ends; exit 1 when it fails" },
} as const satisfies OptionSpecs;
export const DRY_RUN_OPTION = {
  "dry-run": { type: "boolean", description: "show the layout and plan the request would make; change nothing" },
} as const satisfies OptionSpecs;
const UPLOAD_OPTION = {
  file: { type: "string", short: "f", valueName: "path|-", description: "the bytes to upload (- for stdin)" },
} as const satisfies OptionSpecs;

/** A row a command can print: REST, answering JSON or nothing (not the docs page's HTML, scripts and styles). */
export function isCommandRow(endpoint: Endpoint): endpoint is Endpoint & { rest: RestBinding } {
  const reply = endpoint.reply;
  return endpoint.rest !== undefined && (reply === "empty" || !JSON.stringify(reply).includes('"contentMediaType"'));
}

export function endpointCommands(hooks: JobHooks): Command[] {
  return endpointList().flatMap(({ name, endpoint }) => (isCommandRow(endpoint) ? [endpointCommand(name, endpoint.rest, endpoint.request.body, hooks)] : []));
}

function endpointCommand(name: EndpointName, rest: RestBinding, request: Parameters<typeof propertyOptions>[0], hooks: JobHooks): Command {
  const routes = [...rest.routes].sort((a, b) => a.params.length - b.params.length);
  const shortest = routes[0] as RestRoute;
  const longest = routes[routes.length - 1] as RestRoute;
  const args = [...shortest.params.map((p) => `<${p}>`), ...longest.params.slice(shortest.params.length).map((p) => `[${p}]`)];
  const isJob = JOB_ENDPOINTS.has(name);
  const hasBody = rest.body === "json" || rest.body === "optional";
  const taken = new Set<string>([...Object.keys(GLOBAL_OPTIONS), ...Object.keys(BODY_OPTIONS), "wait", "dry-run", "query"]);
  const properties = hasBody ? propertyOptions(request, taken) : [];
  const options: OptionSpecs = {
    ...(hasBody ? { ...BODY_OPTIONS, ...propertyOptionSpecs(properties) } : {}),
    ...(rest.body === "upload" ? UPLOAD_OPTION : {}),
    ...(shortest.method === "GET" ? QUERY_OPTION : {}),
    ...(isJob ? JOB_OPTIONS : {}),
    ...(rest.dryRunReply ? DRY_RUN_OPTION : {}),
  };
  const words = commandWordsOf(name);
  return {
    words,
    summary: `${routes.map((r) => `${r.method} ${r.path}`).join(", ")} (${rest.access})`,
    args,
    options,
    async run(ctx, input) {
      const route = routes.find((r) => r.params.length === input.positionals.length) as RestRoute;
      const { method, path } = restPath(name, Object.fromEntries(route.params.map((param, i) => [param, input.positionals[i] ?? ""])));
      const dryRun = flag(input, "dry-run");
      const query = { ...queryOf(input), ...(dryRun ? { dryRun: "true" } : {}) };
      const body = await requestBody(ctx, input, rest, properties);
      const reply = await ctx
        .client()
        .request(method, path, { query, ...body })
        .catch((err: unknown) => {
          throw withOptionNamed(err, properties);
        });
      if (dryRun) return { result: { value: reply, table: () => hooks.dryRunTable(reply as DryRunResult) } };
      if (isJob && flag(input, "wait")) {
        const clusterId = input.positionals[0] ?? (reply as { id?: string } | undefined)?.id;
        if (clusterId === undefined) throw new UsageError(`${words.join(" ")} answered no cluster id to wait for`);
        return hooks.wait(ctx, clusterId);
      }
      const view = tableViewOf(name);
      const done = `${[...words, ...input.positionals].join(" ")}: done`;
      const table = reply === undefined ? () => done : view ? () => view(reply) : undefined;
      return { result: { value: reply, ...(table ? { table } : {}) } };
    },
  };
}

/** A refusal naming a body field the command has an option for names the option too (`numMachines` -> `--num-machines`). */
function withOptionNamed(err: unknown, properties: readonly PropertyOption[]): unknown {
  if (!(err instanceof ApiError)) return err;
  const field = err.body.details?.["field"];
  const top = typeof field === "string" ? field.split(/[.[]/)[0] : undefined;
  const property = properties.find((p) => p.property === top);
  return property ? new ApiError(err.status, { ...err.body, message: `${err.body.message} (option --${property.option})` }) : err;
}

function queryOf(input: CommandInput): Record<string, string> {
  return Object.fromEntries(
    listOption(input, "query").map((pair) => {
      const at = pair.indexOf("=");
      if (at <= 0) throw new UsageError(`--query ${pair}: write key=value`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

async function requestBody(
  ctx: CommandContext,
  input: CommandInput,
  rest: RestBinding,
  properties: readonly PropertyOption[],
): Promise<{ body?: unknown; bytes?: Uint8Array }> {
  if (rest.body === "upload") {
    const file = stringOption(input, "file");
    if (file === undefined) throw new UsageError("an upload needs the bytes: -f <path> or -f - for stdin");
    return { bytes: await readBytes(file, ctx.stdin) };
  }
  if (rest.body === "none") return {};
  const body = await bodyOf(input, properties, ctx.stdin);
  if (body === undefined && rest.body === "json") {
    const fields = properties.map((p) => `--${p.option}`).join(", ");
    throw new UsageError(`this request needs a body: -f <file>, --data <json>${fields ? ` or the fields ${fields}` : ""}`);
  }
  return body === undefined ? {} : { body };
}
