/**
 * Validators compiled from the endpoint table's request declarations: each checks a value with TypeBox's compiled
 * check, decodes it (numeric strings to numbers, `null` to absent, ...) and, when it is refused, throws the 400 the
 * API always answered: `<field> <problem>` with `details.field` naming the field.
 */
import type { StaticDecode, TObject, TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { HasTransform, TransformDecodeError, Value } from "@sinclair/typebox/value";
import { BadRequestError } from "../errors.js";
import { decodeAccepted } from "./decode-accepted.js";
import { describe, isObject, label } from "./primitives.js";
import { FieldProblem, bodyPaths, parameterPaths, pathWithin, problemOf, type PathStyle } from "./problems.js";

/** Checks and decodes one value; throws the 400 naming the field. */
export type Validator<T> = (value: unknown) => T;

/** The 400 for a problem at `path` (`""`: the whole value, called `root` in the message). */
function refusal(path: string, problem: string, root: string): BadRequestError {
  const field = path === "" ? root : path;
  return new BadRequestError(`${field} ${problem}`, { field });
}

/** `/services/2` (where a decoder failed) as the API names it: `services[2]`. */
function fieldOfPointer(pointer: string, paths: PathStyle): string {
  let path = "";
  for (const raw of pointer.split("/").slice(1)) {
    const segment = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    path = /^(0|[1-9][0-9]*)$/.test(segment) ? paths.item(path, Number(segment)) : paths.child(path, segment);
  }
  return path;
}

/** What a validator needs of a schema's check: whether a value passes, and why not. */
interface SchemaCheck {
  Check(value: unknown): boolean;
  Errors(value: unknown): { First(): { path: string; message: string } | undefined };
}

/**
 * TypeBox's compiled check; where generating code is refused (the console runs under a Content Security Policy
 * without 'unsafe-eval', and imports the catalog's validators), TypeBox's interpreter of the same schema.
 */
function checkOf(schema: TSchema): SchemaCheck {
  try {
    return TypeCompiler.Compile(schema);
  } catch (err) {
    if (!(err instanceof EvalError)) throw err;
    return { Check: (value) => Value.Check(schema, value), Errors: (value) => Value.Errors(schema, value) };
  }
}

/**
 * One check of the compiled schema per value (compiled at the first value, so that importing a validator costs
 * nothing); then, only for schemas with decoders (numeric strings, `null` as absent, ...), one walk that decodes
 * (decode-accepted.ts: it trusts the check, so it never checks a subtree again).
 */
function compile<S extends TSchema>(schema: S, root: string, paths: PathStyle): Validator<StaticDecode<S>> {
  let check: SchemaCheck | undefined;
  const decodes = HasTransform(schema, []);
  return (value) => {
    const compiled = (check ??= checkOf(schema));
    if (!compiled.Check(value)) {
      const found = problemOf(schema, value, "", paths);
      if (found) throw refusal(found.path, found.problem, root);
      const first = compiled.Errors(value).First();
      throw refusal(first ? fieldOfPointer(first.path, paths) : "", `is not valid: ${first?.message ?? "refused"} (got ${describe(value)})`, root);
    }
    if (!decodes) return value as StaticDecode<S>;
    try {
      return decodeAccepted<StaticDecode<S>>(schema, value);
    } catch (err) {
      if (err instanceof TransformDecodeError && err.error instanceof FieldProblem) {
        const { problem, within } = err.error;
        throw refusal(pathWithin(fieldOfPointer(err.path, paths), within), problem, root);
      }
      throw err;
    }
  };
}

/** A JSON body (or a NATS request): fields are dotted paths, the whole value is `body`. */
export function bodyValidator<S extends TSchema>(schema: S): Validator<StaticDecode<S>> {
  return compile(schema, label(""), bodyPaths);
}

/** Path parameters: each field is a parameter's name. */
export function paramsValidator<S extends TObject>(schema: S): Validator<StaticDecode<S>> {
  return compile(schema, "path", parameterPaths);
}

/**
 * Query parameters: their text is read the way OpenAPI serialises the declared schema (`true`/`false` for a boolean,
 * digits for an integer, comma-separated items for an array), then checked.
 */
export function queryValidator<S extends TObject>(schema: S): Validator<StaticDecode<S>> {
  const check = compile(schema, "query", parameterPaths);
  const properties = Object.entries(schema.properties as Record<string, TSchema>);
  return (value) => {
    const text = isObject(value) ? value : {};
    const read: Record<string, unknown> = {};
    for (const [name, property] of properties) {
      const given = Object.hasOwn(text, name) ? text[name] : undefined;
      if (typeof given === "string") read[name] = fromText(property, given);
    }
    return check(read);
  };
}

/** The value `text` stands for under `schema`, or `text` itself when it stands for none (the check then says why). */
function fromText(schema: TSchema, text: string): unknown {
  switch (schema.type) {
    case "boolean":
      return text === "true" ? true : text === "false" ? false : text;
    case "integer":
    case "number":
      return /^-?[0-9]+(\.[0-9]+)?$/.test(text) ? Number(text) : text;
    case "array":
      return text
        .split(",")
        .map((item) => item.trim())
        .filter((item) => item !== "")
        .map((item) => fromText(schema["items"] as TSchema, item));
    default:
      return text;
  }
}
