/** `corral apply` and `corral export`: the catalog as a folder of files, kept in step with the server. */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CATALOG_KINDS, type CatalogEntity, type CatalogKind } from "@corral/contracts";
import { stringify } from "yaml";
import { applyEntities, type ApplyOutcome } from "../catalog/apply.js";
import { entityFile, readCatalogFiles } from "../catalog/entity-files.js";
import { describeChange } from "../catalog/json-diff.js";
import { ExitCode, UsageError } from "../errors.js";
import { flag, listOption, stringOption, type Command } from "./command.js";

/** Lines of a diff shown per updated entity; the rest is counted. */
const DIFF_LINES = 6;

export const applyCommand: Command = {
  words: ["apply"],
  summary: "create or update catalog entities from files or folders; shows created / updated (with a diff) / unchanged",
  options: {
    file: { type: "string", short: "f", multiple: true, valueName: "file|folder|-", description: "entities to apply (repeatable)" },
    "dry-run": { type: "boolean", description: "show what would change; write nothing" },
  },
  async run(ctx, input) {
    const paths = listOption(input, "file");
    if (paths.length === 0) throw new UsageError("apply needs -f <file or folder>");
    const { entities, skipped } = await readCatalogFiles(paths, ctx.stdin);
    if (skipped.length > 0) {
      const shown = skipped.slice(0, 3).join(", ") + (skipped.length > 3 ? `, ... (${skipped.length - 3} more)` : "");
      ctx.stderr.write(`skipped ${skipped.length} file${skipped.length === 1 ? "" : "s"} naming no catalog kind (no kind folder above, no "kind" field): ${shown}\n`);
    }
    if (entities.length === 0) throw new UsageError(`no catalog entities in ${paths.join(", ")}`);
    const outcomes = await applyEntities(ctx.client(), entities, { dryRun: flag(input, "dry-run") });
    const failed = outcomes.some((o) => o.action === "failed");
    return {
      result: { value: outcomes, table: () => applyReport(outcomes, flag(input, "dry-run")) },
      exitCode: failed ? ExitCode.Refused : ExitCode.Ok,
    };
  },
};

function applyReport(outcomes: readonly ApplyOutcome[], dryRun: boolean): string {
  const lines: string[] = [];
  for (const o of outcomes) {
    const action = dryRun && o.action !== "unchanged" ? `${o.action} (dry run)` : o.action;
    lines.push(`${o.kind}/${o.name} ${action}${o.error ? `: ${o.error}` : ""}`);
    const changes = o.changes ?? [];
    for (const change of changes.slice(0, DIFF_LINES)) lines.push(`    ${describeChange(change)}`);
    if (changes.length > DIFF_LINES) lines.push(`    ... ${changes.length - DIFF_LINES} more changes`);
  }
  const counts = (["created", "updated", "unchanged", "failed"] as const).map((a) => `${outcomes.filter((o) => o.action === a).length} ${a}`);
  lines.push(counts.join(", "));
  return lines.join("\n");
}

export const exportCommand: Command = {
  words: ["export"],
  summary: "the tenant's catalog: printed, or with --dir written as one file per entity that apply reads back",
  options: {
    dir: { type: "string", short: "d", valueName: "folder", description: "write <folder>/<kind>/<name>.json (or .yaml)" },
    as: { type: "string", valueName: "json|yaml", description: "format of the files written (default json)" },
  },
  async run(ctx, input) {
    const catalog = await ctx.client().request<Record<CatalogKind, CatalogEntity[]>>("GET", "/export");
    const dir = stringOption(input, "dir");
    if (dir === undefined) return { result: { value: catalog } };
    const as = stringOption(input, "as") ?? "json";
    if (as !== "json" && as !== "yaml") throw new UsageError(`--as ${as}: files are json or yaml`);
    const written: Array<{ kind: CatalogKind; name: string; file: string }> = [];
    for (const kind of CATALOG_KINDS) {
      if (catalog[kind].length > 0) await mkdir(join(dir, kind), { recursive: true });
      for (const entity of catalog[kind]) {
        const file = join(dir, entityFile(kind, entity.name, as));
        await writeFile(file, as === "json" ? `${JSON.stringify(entity, null, 2)}\n` : stringify(entity));
        written.push({ kind, name: entity.name, file });
      }
    }
    return { result: { value: written, table: () => `${written.length} entities written to ${dir}` } };
  },
};
