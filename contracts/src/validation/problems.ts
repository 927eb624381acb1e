/**
 * What is wrong with a value a schema refused, said the way the API always said it: the field's path and the
 * problem (`numMachines must be >= 1 (got 0)`, `services[2] must contain only letters, ...`, `config is required`).
 * Only run once the compiled check has refused the value, so its cost is never paid on the good path.
 */
import { Kind, type TSchema } from "@sinclair/typebox";
import { child, describe, getOwn, isObject, item } from "./primitives.js";

/** Marks a union member that is the text form of a sibling (`"3"` for 3): messages name the sibling only. */
export const TEXT_FORM = Symbol("corral.textForm");

/** Thrown by a decoder when a value the schema let through still breaks the field's rule. */
export class FieldProblem extends Error {
  /** @param within where in the decoded value the problem is (`a.b`, `[2].c`), if not the value itself */
  constructor(
    readonly problem: string,
    readonly within?: string,
  ) {
    super(problem);
  }
}

/** `path` with `within` (a path inside its value) appended: `config` + `a[2]` -> `config.a[2]`. */
export function pathWithin(path: string, within: string | undefined): string {
  if (within === undefined || within === "") return path;
  if (path === "") return within.startsWith("[") ? `body${within}` : within;
  return within.startsWith("[") ? `${path}${within}` : `${path}.${within}`;
}

/** On an object schema that refuses undeclared keys: what messages say of one (default `is not a known field`). */
export const UNKNOWN_KEY = Symbol("corral.unknownKey");

/** Overrides what messages say of a refused value (absent included) for one schema. */
export const PROBLEM = Symbol("corral.problem");

/** `schema` whose refusals say `problem(value)` (when it answers one) instead of what its keywords would. */
export function withProblem<T extends TSchema>(schema: T, problem: (value: unknown) => string | undefined): T {
  return Object.assign(schema, { [PROBLEM]: problem });
}

/** The largest integer messages speak of without the value (`must be <= 9007199254740991`). */
const SAFE_MAXIMUM = Number.MAX_SAFE_INTEGER;

/** What the API says of an integer above `maximum`. */
export const aboveMaximum = (maximum: number, value: number): string =>
  maximum === SAFE_MAXIMUM ? `must be <= ${maximum}` : `must be at most ${maximum} (got ${value})`;

interface PatternRule {
  /** What a matching string is, for messages about unions (`a name`). */
  noun: string;
  /** The problem with `value`, or `undefined`; absent: "must match <pattern>". */
  problem?: (value: string) => string | undefined;
}

const patterns = new Map<string, PatternRule>();

/** How messages speak of strings that must match `pattern`. */
export function registerPattern(pattern: string, noun: string, problem?: (value: string) => string | undefined): void {
  patterns.set(pattern, { noun, ...(problem ? { problem } : {}) });
}

/** A refused field: its path (dotted, `[i]` for items; `""` is the whole value) and the problem. */
export interface Problem {
  path: string;
  problem: string;
}

/** How paths are written: query parameters name the parameter, not an item of it. */
export interface PathStyle {
  child(path: string, key: string): string;
  item(path: string, index: number): string;
}

export const bodyPaths: PathStyle = { child, item };
export const parameterPaths: PathStyle = { child, item: (path) => path };

type Schema = TSchema & Record<string | symbol, unknown>;

const kindOf = (schema: Schema): string => String(schema[Kind]);

/** The first problem of `value` under `schema`, in declaration order; `undefined` when none is found. */
export function problemOf(schema: TSchema, value: unknown, path: string, paths: PathStyle): Problem | undefined {
  return visit(schema as Schema, value, path, paths);
}

const overrideOf = (schema: Schema) => schema[PROBLEM] as ((value: unknown) => string | undefined) | undefined;

function visit(schema: Schema, value: unknown, path: string, paths: PathStyle): Problem | undefined {
  const overridden = overrideOf(schema)?.(value);
  if (overridden !== undefined) return { path, problem: overridden };
  // An absent field is required; an absent body is as wrong as any other non-object.
  if (value === undefined && path !== "") return { path, problem: "is required" };
  const at = (problem: string): Problem => ({ path, problem });
  switch (kindOf(schema)) {
    case "Object":
      return objectProblem(schema, value, path, paths);
    case "Record":
      return recordProblem(schema, value, path, paths);
    case "Array": {
      if (!Array.isArray(value)) return at(`must be ${expectation(schema)} (got ${describe(value)})`);
      const minItems = schema["minItems"] as number | undefined;
      if (minItems !== undefined && value.length < minItems) {
        return at(minItems === 1 ? "must not be empty" : `must have at least ${minItems} entries (got ${value.length})`);
      }
      const maxItems = schema["maxItems"] as number | undefined;
      if (maxItems !== undefined && value.length > maxItems) return at(`must have at most ${maxItems} entries (got ${value.length})`);
      for (let i = 0; i < value.length; i++) {
        const found = visit(schema["items"] as Schema, value[i], paths.item(path, i), paths);
        if (found) return found;
      }
      return undefined;
    }
    case "String":
      return typeof value === "string" ? stringProblem(schema, value, path) : at(`must be a string (got ${describe(value)})`);
    case "StringEnum": {
      const values = schema["enum"] as readonly string[];
      return typeof value === "string" && values.includes(value) ? undefined : at(`must be one of ${values.join(", ")} (got ${describe(value)})`);
    }
    case "Integer":
    case "Number":
      return numberProblem(schema, value, path);
    case "Boolean":
      return typeof value === "boolean" ? undefined : at(`must be a boolean (got ${describe(value)})`);
    case "Null":
      return value === null ? undefined : at(`must be null (got ${describe(value)})`);
    case "Literal":
      return value === schema["const"] ? undefined : at(`must be ${JSON.stringify(schema["const"])} (got ${describe(value)})`);
    case "Union":
      return unionProblem(schema, value, path, paths);
    default:
      return undefined;
  }
}

function objectProblem(schema: Schema, value: unknown, path: string, paths: PathStyle): Problem | undefined {
  if (!isObject(value)) {
    return { path, problem: path === "" ? "must be a JSON object" : `must be an object (got ${describe(value)})` };
  }
  const properties = (schema["properties"] ?? {}) as Record<string, Schema>;
  const required = new Set((schema["required"] ?? []) as string[]);
  for (const [key, property] of Object.entries(properties)) {
    const given = getOwn(value, key);
    if (given === undefined) {
      if (required.has(key)) return visit(property, undefined, paths.child(path, key), paths);
      continue;
    }
    const found = visit(property, given, paths.child(path, key), paths);
    if (found) return found;
  }
  const others = schema["additionalProperties"];
  if (others === false || (typeof others === "object" && others !== null)) {
    for (const [key, given] of Object.entries(value)) {
      if (Object.hasOwn(properties, key)) continue;
      if (others === false) return { path: paths.child(path, key), problem: (schema[UNKNOWN_KEY] as string | undefined) ?? "is not a known field" };
      const found = visit(others as Schema, given, paths.child(path, key), paths);
      if (found) return found;
    }
  }
  return undefined;
}

/** A map: an object whose keys match one pattern (refused with what the pattern's rule says) and hold one schema. */
function recordProblem(schema: Schema, value: unknown, path: string, paths: PathStyle): Problem | undefined {
  if (!isObject(value)) return { path, problem: `must be an object (got ${describe(value)})` };
  const [pattern = "", values] = Object.entries((schema["patternProperties"] ?? {}) as Record<string, Schema>)[0] ?? [];
  const keys = new RegExp(pattern, "u");
  const rule = patterns.get(pattern);
  for (const [key, member] of Object.entries(value)) {
    if (!keys.test(key)) {
      if (schema["additionalProperties"] !== false) continue;
      const why = rule?.problem?.(key)?.replace(/ \(got ".*"\)$/, "") ?? `must match ${pattern}`;
      return { path, problem: `key ${describe(key)} ${why}` };
    }
    const found = values && member !== undefined ? visit(values, member, paths.child(path, key), paths) : undefined;
    if (found) return found;
  }
  return undefined;
}

function stringProblem(schema: Schema, value: string, path: string): Problem | undefined {
  const at = (problem: string): Problem => ({ path, problem });
  const pattern = schema["pattern"] as string | undefined;
  const rule = pattern === undefined ? undefined : patterns.get(pattern);
  const ruled = rule?.problem?.(value);
  if (ruled !== undefined) return at(ruled);
  const minLength = schema["minLength"] as number | undefined;
  if (minLength !== undefined && value.length < minLength) {
    return at(minLength === 1 ? "must not be empty" : `must be at least ${minLength} characters (got ${value.length})`);
  }
  const maxLength = schema["maxLength"] as number | undefined;
  if (maxLength !== undefined && value.length > maxLength) {
    return at(maxLength === 0 ? `must be empty (got ${describe(value)})` : `must be at most ${maxLength} characters (got ${value.length})`);
  }
  if (pattern !== undefined && !new RegExp(pattern, "u").test(value)) {
    return at(rule ? `must be ${rule.noun} (got ${describe(value)})` : `must match ${pattern} (got ${describe(value)})`);
  }
  return undefined;
}

function numberProblem(schema: Schema, value: unknown, path: string): Problem | undefined {
  const at = (problem: string): Problem => ({ path, problem });
  const integral = kindOf(schema) === "Integer";
  const fits = typeof value === "number" && Number.isFinite(value) && (!integral || Number.isInteger(value));
  if (!fits) return at(`must be ${integral ? "an integer" : "a number"} (got ${describe(value)})`);
  const minimum = schema["minimum"] as number | undefined;
  if (minimum !== undefined && value < minimum) return at(`must be >= ${minimum} (got ${value})`);
  const maximum = schema["maximum"] as number | undefined;
  if (maximum !== undefined && value > maximum) return at(aboveMaximum(maximum, value));
  return undefined;
}

/**
 * A union's problem: the problem under its one member of the value's JSON type (`0` for an integer member: too
 * small), else what a member with its own problem says of it, else what the union takes (`must be an integer (got
 * "three")`). Text forms and `null` are never named.
 */
function unionProblem(schema: Schema, value: unknown, path: string, paths: PathStyle): Problem | undefined {
  const members = (schema["anyOf"] as Schema[]).filter((member) => member[TEXT_FORM] !== true);
  const ofType = members.filter((member) => takesTypeOf(member, value));
  if (ofType.length === 1) return visit(ofType[0]!, value, path, paths);
  // A member that says itself what is wrong with a value none takes speaks for the union (`must be a string (got 3)`).
  const said = ofType.length === 0 ? members.map((member) => overrideOf(member)?.(value)).find((problem) => problem !== undefined) : undefined;
  return { path, problem: said ?? `must be ${expectation(schema)} (got ${describe(value)})` };
}

/** Whether `schema` takes values of `value`'s JSON type (an integer schema takes any number, to name its problem). */
function takesTypeOf(schema: Schema, value: unknown): boolean {
  switch (kindOf(schema)) {
    case "Object":
    case "Record":
      return isObject(value);
    case "Array":
      return Array.isArray(value);
    case "String":
    case "StringEnum":
      return typeof value === "string";
    case "Integer":
    case "Number":
      return typeof value === "number";
    case "Boolean":
      return typeof value === "boolean";
    case "Null":
      return value === null;
    case "Literal":
      return typeof value === typeof schema["const"];
    case "Union":
      return (schema["anyOf"] as Schema[]).some((member) => member[TEXT_FORM] !== true && takesTypeOf(member, value));
    default:
      return true;
  }
}

/** What a schema takes, as a noun phrase (`an integer`, `an array of names`). */
function expectation(schema: Schema): string {
  switch (kindOf(schema)) {
    case "Object":
    case "Record":
      return "an object";
    case "Array": {
      const items = schema["items"] as Schema;
      const pattern = kindOf(items) === "String" ? (items["pattern"] as string | undefined) : undefined;
      const noun = pattern === undefined ? undefined : patterns.get(pattern)?.noun;
      return noun?.startsWith("a ") ? `an array of ${noun.slice(2)}s` : "an array";
    }
    case "String": {
      const pattern = schema["pattern"] as string | undefined;
      return (pattern === undefined ? undefined : patterns.get(pattern)?.noun) ?? "a string";
    }
    case "StringEnum":
      return `one of ${(schema["enum"] as string[]).join(", ")}`;
    case "Integer":
      return "an integer";
    case "Number":
      return "a number";
    case "Boolean":
      return "a boolean";
    case "Literal":
      return JSON.stringify(schema["const"]);
    case "Union": {
      const named = (schema["anyOf"] as Schema[]).filter((member) => member[TEXT_FORM] !== true && kindOf(member) !== "Null");
      return [...new Set(named.map(expectation))].join(" or ") || "a valid value";
    }
    default:
      return "a JSON value";
  }
}
