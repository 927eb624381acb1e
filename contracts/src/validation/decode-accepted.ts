/**
 * Decoding of a value the compiled check has accepted, with TypeBox's results (each Transform's Decode, innermost
 * first; every object and array the schema declares copied) at a fraction of its cost: a union's member is chosen by
 * the value's JSON type, and only when several members take that type by a compiled check of each, where TypeBox's
 * TransformDecode checks each member it meets with its interpreter, walking the subtree again at every optional level.
 */
import { Kind, TransformKind, type TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { TransformDecodeError, Value } from "@sinclair/typebox/value";
import { isObject } from "./primitives.js";

type Schema = TSchema & Record<string | symbol, unknown>;
interface Codec {
  Decode(value: unknown): unknown;
}

const checks = new WeakMap<object, (value: unknown) => boolean>();
function check(schema: Schema, value: unknown): boolean {
  let compiled = checks.get(schema);
  if (compiled === undefined) {
    try {
      const c = TypeCompiler.Compile(schema);
      compiled = (v) => c.Check(v);
    } catch (err) {
      if (!(err instanceof EvalError)) throw err;
      compiled = (v) => Value.Check(schema, v);
    }
    checks.set(schema, compiled);
  }
  return compiled(value);
}

/** Whether `schema` could take a value of `value`'s JSON type (a cheap filter before any check). */
function mayTake(schema: Schema, value: unknown): boolean {
  switch (schema[Kind]) {
    case "Object":
    case "Record":
      return isObject(value);
    case "Array":
      return Array.isArray(value);
    case "String":
      return typeof value === "string";
    case "Integer":
    case "Number":
      return typeof value === "number";
    case "Boolean":
      return typeof value === "boolean";
    case "Null":
      return value === null;
    default:
      return true;
  }
}

/** `value` (accepted by `schema`'s check) decoded; throws TransformDecodeError where a decoder refuses it. */
export function decodeAccepted<T>(schema: TSchema, value: unknown): T {
  return visit(schema as Schema, value, "") as T;
}

function visit(schema: Schema, value: unknown, path: string): unknown {
  const inner = visitInner(schema, value, path);
  const codec = schema[TransformKind] as Codec | undefined;
  if (codec === undefined) return inner;
  try {
    return codec.Decode(inner);
  } catch (error) {
    throw new TransformDecodeError(schema, path, value, error as Error);
  }
}

/** What a decoding walk needs of an object or record schema, worked out once per schema. */
interface Members {
  properties: ReadonlyArray<readonly [string, Schema]>;
  declared: Readonly<Record<string, unknown>>;
  /** What other keys hold (a schema); for a record, the keys it holds it for. */
  others?: Schema;
  keys?: RegExp;
}
const membersOf = new WeakMap<object, Members>();

function members(schema: Schema): Members {
  let found = membersOf.get(schema);
  if (found !== undefined) return found;
  if (schema[Kind] === "Record") {
    const [pattern = "", values] = Object.entries((schema["patternProperties"] ?? {}) as Record<string, Schema>)[0] ?? [];
    found = { properties: [], declared: {}, ...(values ? { others: values, keys: new RegExp(pattern) } : {}) };
  } else {
    const declared = (schema["properties"] ?? {}) as Record<string, Schema>;
    const others = schema["additionalProperties"];
    const kept = typeof others === "object" && others !== null;
    found = { properties: Object.entries(declared), declared, ...(kept ? { others: others as Schema } : {}) };
  }
  membersOf.set(schema, found);
  return found;
}

/** A copy of an object (as TypeBox's decoding makes one) with its members decoded. */
function decodeMembers(schema: Schema, value: Record<string, unknown>, path: string): Record<string, unknown> {
  const { properties, declared, others, keys } = members(schema);
  const out: Record<string, unknown> = { ...value };
  for (const [key, property] of properties) {
    if (Object.hasOwn(out, key) && out[key] !== undefined) out[key] = visit(property, out[key], `${path}/${key}`);
  }
  if (others !== undefined) {
    for (const key of Object.keys(out)) {
      const undeclared = keys ? keys.test(key) : !Object.hasOwn(declared, key);
      if (undeclared && out[key] !== undefined) out[key] = visit(others, out[key], `${path}/${key}`);
    }
  }
  return out;
}

function visitInner(schema: Schema, value: unknown, path: string): unknown {
  switch (schema[Kind]) {
    case "Object":
    case "Record":
      return isObject(value) ? decodeMembers(schema, value, path) : value;
    case "Array":
      return Array.isArray(value) ? value.map((item, i) => visit(schema["items"] as Schema, item, `${path}/${i}`)) : value;
    case "Union": {
      const taking = (schema["anyOf"] as Schema[]).filter((member) => mayTake(member, value));
      const member = taking.length === 1 ? taking[0] : taking.find((m) => check(m, value));
      return member === undefined ? value : visit(member, value, path);
    }
    default:
      return value;
  }
}
