/**
 * Options for a request body, derived from the endpoint's request schema: `-f <file>` / `--data <json>` for the
 * whole body, and one `--kebab-name <value>` per top-level property (`numMachines` -> `--num-machines 3`), whose
 * value is read as the schema says (integers, `true|false`, comma lists, JSON or `@file` for objects; an object of
 * one integer member also takes the bare number: `--rolling 2` is `{"maxUnavailable": 2}`).
 */
import { primaryForm, type JsonSchema } from "@corral/contracts";
import { UsageError } from "../errors.js";
import { parseDocument, readDocument } from "../input-files.js";
import { isPlainObject } from "../output/table.js";
import { stringOption, type CommandInput, type OptionSpecs } from "./command.js";

export const BODY_OPTIONS = {
  file: { type: "string", short: "f", valueName: "path|-", description: "request body: a JSON or YAML file (- for stdin)" },
  data: { type: "string", valueName: "json", description: "request body as inline JSON or YAML" },
} as const satisfies OptionSpecs;

/** One option per property of the body: its option name and schema. */
export interface PropertyOption {
  option: string;
  property: string;
  schema: JsonSchema;
}

export const kebabCase = (name: string): string => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/**
 * The property options of a request schema. A property whose name another option has already (a webhook's `url`
 * and the global `--url`) gets `--body-<name>` instead.
 */
export function propertyOptions(schema: JsonSchema | undefined, taken: ReadonlySet<string>): PropertyOption[] {
  return Object.entries(schema?.properties ?? {})
    .map(([property, propertySchema]) => {
      const plain = kebabCase(property);
      return { option: taken.has(plain) ? `body-${plain}` : plain, property, schema: primaryForm(propertySchema) };
    })
    .filter((p) => !taken.has(p.option));
}

export function propertyOptionSpecs(properties: readonly PropertyOption[]): OptionSpecs {
  return Object.fromEntries(
    properties.map((p) => [p.option, { type: "string", valueName: valueNameOf(p.schema), description: `body field ${p.property}` }]),
  );
}

/** The member of an object schema that is its only one and an integer (`rolling`'s `maxUnavailable`). */
function soleIntegerMember(schema: JsonSchema): string | undefined {
  const members = Object.entries(schema.properties ?? {});
  const [name, member] = members[0] ?? [];
  return members.length === 1 && member !== undefined && primaryForm(member).type === "integer" ? name : undefined;
}

function valueNameOf(schema: JsonSchema): string {
  if (schema.enum) return schema.enum.join("|");
  if (schema.type === "object" && soleIntegerMember(schema) !== undefined) return "n|json|@file";
  switch (schema.type) {
    case "integer":
    case "number":
      return "n";
    case "boolean":
      return "true|false";
    case "array":
      return "a,b,...";
    case "string":
      return "text";
    default:
      return "json|@file";
  }
}

/** The body: the file's or `--data`'s document, with the property options set over it; undefined when none given. */
export async function bodyOf(
  input: CommandInput,
  properties: readonly PropertyOption[],
  stdin: NodeJS.ReadableStream,
): Promise<Record<string, unknown> | unknown[] | undefined> {
  const file = stringOption(input, "file");
  const data = stringOption(input, "data");
  if (file !== undefined && data !== undefined) throw new UsageError("give the body with -f or with --data, not both");
  const base = file !== undefined ? await readDocument(file, stdin) : data !== undefined ? parseDocument(data, "--data") : undefined;
  const fields: Record<string, unknown> = {};
  for (const p of properties) {
    const raw = stringOption(input, p.option);
    if (raw !== undefined) fields[p.property] = await valueOf(raw, p, stdin);
  }
  if (Object.keys(fields).length === 0) return base as Record<string, unknown> | undefined;
  if (base !== undefined && !isPlainObject(base)) throw new UsageError("field options need the body to be a JSON object");
  return { ...base, ...fields };
}

async function valueOf(raw: string, p: PropertyOption, stdin: NodeJS.ReadableStream): Promise<unknown> {
  const bad = (what: string) => new UsageError(`--${p.option} ${raw}: ${what}`);
  switch (p.schema.type) {
    case "string":
      if (p.schema.enum && !p.schema.enum.includes(raw)) throw bad(`must be one of ${p.schema.enum.join(", ")}`);
      return raw;
    case "integer":
    case "number": {
      const n = Number(raw);
      if (raw.trim() === "" || !Number.isFinite(n) || (p.schema.type === "integer" && !Number.isInteger(n))) {
        throw bad(`must be ${p.schema.type === "integer" ? "an integer" : "a number"}`);
      }
      return n;
    }
    case "boolean":
      if (raw !== "true" && raw !== "false") throw bad("must be true or false");
      return raw === "true";
    case "array":
      if (p.schema.items?.type === "string") return raw.split(",").map((s) => s.trim()).filter((s) => s !== "");
      return structured(raw, p, stdin);
    default: {
      const member = soleIntegerMember(p.schema);
      if (member !== undefined && /^\d+$/.test(raw)) return { [member]: Number(raw) };
      return structured(raw, p, stdin);
    }
  }
}

/** `@path` reads a JSON or YAML file; anything else is inline JSON or YAML. */
function structured(raw: string, p: PropertyOption, stdin: NodeJS.ReadableStream): Promise<unknown> | unknown {
  return raw.startsWith("@") ? readDocument(raw.slice(1), stdin) : parseDocument(raw, `--${p.option}`);
}
