/**
 * Schemas of request fields whose rule is more than a JSON type: names, integers that may arrive as numeric
 * strings, booleans as "true" / "false", DNS suffixes, and `null` read as "not given" in request bodies. Each is a
 * TypeBox schema, so the endpoint table declares a request with them once: the published description shows the wire
 * form, the gateway's services validate against it (check.ts), and handlers get the decoded value, typed.
 */
import {
  Type,
  type Static,
  type StaticDecode,
  type TBoolean,
  type TNull,
  type TNumber,
  type TOptional,
  type TRecord,
  type TSchema,
  type TString,
  type TTransform,
  type TUnion,
  type TUnsafe,
} from "@sinclair/typebox";
import type { JsonSchema } from "../endpoints/json-schema.js";
import type { JsonObject } from "../entities.js";
import { MAX_JSON_DEPTH, MAX_NAME_LENGTH, describe, isObject, nameProblem } from "./primitives.js";
import { FieldProblem, TEXT_FORM, UNKNOWN_KEY, aboveMaximum, registerPattern } from "./problems.js";

/** The NAME rule (docs/api.md, Validation): letters, digits, `.`, `_`, `-`; never `__proto__`, which decoders rename. */
export const NAME_PATTERN = "^(?!__proto__$)[A-Za-z0-9._-]+$";
registerPattern(NAME_PATTERN, "a name", (value) => nameProblem(value, true));

/**
 * What a field holds, seen through the forms it also takes: an `integerField` is an integer (its digits as text
 * are a convenience), an optional field that may be `null` is its schema. For readers that present fields (the
 * CLI's options): the schema itself when it has no such forms.
 */
export function primaryForm(schema: JsonSchema): JsonSchema {
  const forms = schema.anyOf?.filter((member) => (member as Record<symbol, unknown>)[TEXT_FORM] !== true && member.type !== "null");
  return forms?.length === 1 ? primaryForm(forms[0]!) : schema;
}

/** A name under the NAME rule. */
export const nameField = (options: { description?: string } = {}): TString =>
  Type.String({ ...options, pattern: NAME_PATTERN, maxLength: MAX_NAME_LENGTH });

/** A name that also names a directory: the NAME rule, and never `.` or `..`. */
const RESOURCE_NAME_PATTERN = "^(?!__proto__$)(?!\\.{1,2}$)[A-Za-z0-9._-]+$";
registerPattern(RESOURCE_NAME_PATTERN, "a name", (value) => (value === "." || value === ".." ? `name ${value} is reserved` : nameProblem(value, true)));

export const resourceNameField = (options: { description?: string } = {}): TString =>
  Type.String({ ...options, pattern: RESOURCE_NAME_PATTERN, maxLength: MAX_NAME_LENGTH });

/** Any non-empty text up to `maxLength` characters (ids, which are not NAMEs). */
export const textField = (options: { maxLength?: number; description?: string } = {}): TString =>
  Type.String({ minLength: 1, maxLength: options.maxLength ?? MAX_NAME_LENGTH, ...options });

/** Decimal digits, with a sign: the text form of an integer. */
const INTEGER_TEXT = "^-?[0-9]+$";
registerPattern(INTEGER_TEXT, "an integer");

export interface IntegerBounds {
  /** @default 0 */
  minimum?: number;
  /** @default Number.MAX_SAFE_INTEGER */
  maximum?: number;
  description?: string;
}

/** The same schema, marked as the text form of a sibling in a union (named by it in messages, never picked for them). */
function textForm<T extends TSchema>(schema: T): T {
  return Object.assign(schema, { [TEXT_FORM]: true });
}

/** An integer within bounds, given as a JSON number or as its decimal digits (`"3"`, as Coopr's clients send). */
export function integerField(bounds: IntegerBounds = {}): TTransform<TUnion<[ReturnType<typeof Type.Integer>, TString]>, number> {
  const minimum = bounds.minimum ?? 0;
  const maximum = bounds.maximum ?? Number.MAX_SAFE_INTEGER;
  const wire = Type.Union([Type.Integer({ minimum, maximum }), textForm(Type.String({ pattern: INTEGER_TEXT }))], {
    ...(bounds.description !== undefined ? { description: bounds.description } : {}),
  });
  return Type.Transform(wire)
    .Decode((value) => (typeof value === "number" ? value || 0 : withinBounds(Number(value), minimum, maximum)))
    .Encode((value) => value);
}

/** `n` when within bounds; else a FieldProblem saying which bound it breaks. */
export function withinBounds(n: number, minimum: number, maximum: number): number {
  if (n < minimum) throw new FieldProblem(`must be >= ${minimum} (got ${n})`);
  if (n > maximum) throw new FieldProblem(aboveMaximum(maximum, n));
  return n === 0 ? 0 : n; // no -0
}

/** A boolean, or the text `"true"` / `"false"`. */
export function booleanField(options: { description?: string } = {}): TTransform<TUnion<[ReturnType<typeof Type.Boolean>, TString]>, boolean> {
  const wire = Type.Union([Type.Boolean(), textForm(Type.String({ pattern: "^(true|false)$" }))], options);
  return Type.Transform(wire)
    .Decode((value) => value === true || value === "true")
    .Encode((value) => value);
}
registerPattern("^(true|false)$", "a boolean");

/** `^\s*(?:[aA][cC][tT][iI][vV][eE]|...)\s*$`: one of `values` in any case, spaces around allowed. */
function anyCasePattern(values: readonly string[]): string {
  const letter = (c: string) => (c.toLowerCase() !== c.toUpperCase() ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return `^\\s*(?:${values.map((v) => [...v].map(letter).join("")).join("|")})\\s*$`;
}

/**
 * One of `values` (lower case), given in any case (`Active`, `STAGED`): decoded to the listed value. For query
 * parameters, which people type.
 */
export function anyCaseValue<const V extends string>(values: readonly V[], options: { description?: string } = {}): TTransform<TString, V> {
  const pattern = anyCasePattern(values);
  registerPattern(pattern, `one of ${values.join(", ")} (any case)`);
  return Type.Transform(Type.String({ ...options, pattern }))
    .Decode((value) => value.trim().toLowerCase() as V)
    .Encode((value) => value);
}

/** A DNS suffix as a cluster request gives it: dot-separated labels of 1-63 letters, digits and `-` (a leading dot allowed). */
const DNS_SUFFIX_PATTERN = "^\\.?[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$";
registerPattern(DNS_SUFFIX_PATTERN, "a DNS suffix", (value) =>
  new RegExp(DNS_SUFFIX_PATTERN).test(value) ? undefined : `must be a DNS suffix such as "example.com" (got ${JSON.stringify(value)})`,
);

/** A DNS suffix, or `""` for none (decoded as absent). */
export function dnsSuffixField(options: { description?: string } = {}): TTransform<TUnion<[TString, TString]>, string | undefined> {
  const wire = Type.Union([Type.String({ pattern: DNS_SUFFIX_PATTERN }), textForm(Type.String({ maxLength: 0 }))], options);
  return Type.Transform(wire)
    .Decode((value) => (value === "" ? undefined : value))
    .Encode((value) => value ?? "");
}

/** A list without repeats: the decoded value keeps the first of each. */
export function distinct<T extends TSchema>(list: T): TTransform<T, Static<T>> {
  return Type.Transform(list)
    .Decode((value) => [...new Set(value as unknown[])] as Static<T>)
    .Encode((value) => value);
}

/** An optional request field that may also be given as `null`, which reads as not given. */
export type TOptionalField<T extends TSchema> = TOptional<TTransform<TUnion<[T, TNull]>, StaticDecode<T> | undefined>>;

export function optionalField<T extends TSchema>(schema: T): TOptionalField<T> {
  const wire = Type.Union([schema, Type.Null()]);
  const decoded = Type.Transform(wire)
    .Decode((value) => (value === null ? undefined : (value as StaticDecode<T>)))
    .Encode((value) => (value === undefined ? null : value) as never);
  return Type.Optional(decoded);
}

/**
 * A body's fields as a handler gets them: each decoded, the optional ones possibly absent unless `Filled` (those
 * with a default).
 */
export type DecodedBody<R extends Readonly<Record<string, TSchema>>, O extends Readonly<Record<string, TSchema>>, Filled extends keyof O = never> = {
  -readonly [K in keyof R]: StaticDecode<R[K]>;
} & { -readonly [K in Exclude<keyof O, Filled>]?: StaticDecode<O[K]> } & { -readonly [K in Filled]: StaticDecode<O[K]> };

/** A body's fields as a client sends them: the optional ones possibly absent or `null`. */
export type WireBody<R extends Readonly<Record<string, TSchema>>, O extends Readonly<Record<string, TSchema>>> = {
  -readonly [K in keyof R]: Static<R[K]>;
} & { -readonly [K in keyof O]?: Static<O[K]> | null };

/**
 * A request body of `required` and `optional` fields, as declared (the wire) and as decoded. (Its types are
 * spelled out here rather than left to TObject's, which the compiler takes far longer to work out.)
 */
export type TBody<R extends Readonly<Record<string, TSchema>>, O extends Readonly<Record<string, TSchema>>, Filled extends keyof O = never> = TTransform<
  TUnsafe<WireBody<R, O>>,
  DecodedBody<R, O, Filled>
>;

/** Decoded values of some of the optional fields `O`: what they decode to when not given. */
export type BodyDefaults<O extends Readonly<Record<string, TSchema>>> = { readonly [K in keyof O]?: StaticDecode<O[K]> };

export interface BodyOptions<D = Readonly<Record<string, unknown>>> {
  description?: string;
  /** The decoded body's key order (a stored entity's canonical order). @default required fields, then optional ones */
  order?: readonly string[];
  /** What an optional field not given decodes to (copied for each request); the decoded type has it. @default left out */
  defaults?: D;
  /** Refuse keys it does not declare, saying this of them (`is not an allowed action (...)`). @default allowed, ignored */
  unknownKey?: string;
  /**
   * What any other key holds; such keys are kept (an own `__proto__` is refused: decoders rename it). Absent: other
   * keys are allowed and ignored, as they always were (a client may send what an older or newer API takes).
   */
  others?: TSchema;
}

/**
 * A request body: an object with `required` fields and `optional` ones (`null` meaning not given; the decoded body
 * leaves out what was not given).
 */
export function bodyOf<
  R extends Readonly<Record<string, TSchema>>,
  O extends Readonly<Record<string, TSchema>> = {},
  D extends BodyDefaults<O> = {},
>(required: R, optional: O = {} as O, options: BodyOptions<D> = {}): TBody<R, O, keyof D & keyof O> {
  const optionals = Object.fromEntries(Object.entries(optional).map(([key, schema]) => [key, optionalField(schema)]));
  const properties: Record<string, TSchema> = { ...required, ...optionals };
  const { others, order, defaults: filled, unknownKey, ...rest } = options;
  const defaults: Readonly<Record<string, unknown>> = filled ?? {};
  const wire = Type.Object(properties, { ...rest, additionalProperties: unknownKey !== undefined ? false : (others ?? true) });
  if (unknownKey !== undefined) Object.assign(wire, { [UNKNOWN_KEY]: unknownKey });
  const declared = order ?? Object.keys(properties);
  const decode = (given: Record<string, unknown>) => {
    if (others !== undefined && Object.hasOwn(given, "__proto__")) {
      throw new FieldProblem("is a reserved key and cannot be used as an object key", "__proto__");
    }
    // Declared fields first, in declaration order; what was not given is left out, as are undeclared keys unless kept.
    const decoded: Record<string, unknown> = {};
    for (const key of declared) {
      if (Object.hasOwn(given, key) && given[key] !== undefined) decoded[key] = given[key];
      else if (Object.hasOwn(defaults, key)) decoded[key] = structuredClone(defaults[key]);
    }
    if (others !== undefined) for (const key of Object.keys(given)) if (!Object.hasOwn(properties, key)) decoded[key] = given[key];
    return decoded;
  };
  return Type.Transform(wire)
    .Decode((body) => decode(body as Record<string, unknown>))
    .Encode((body) => body) as never;
}

/** A member's path within its parent's (`a` + `b[2]` -> `a.b[2]`, `[1]` + `c` -> `[1].c`). */
function within(step: string, rest: string | undefined): string {
  if (rest === undefined || rest === "") return step;
  return rest.startsWith("[") ? `${step}${rest}` : `${step}.${rest}`;
}

/**
 * `value` as JSON a store can keep (finite numbers, nesting at most MAX_JSON_DEPTH deep), copied when `copy`, or the
 * FieldProblem saying where and why it is not. One walk does both; a path is only built for a problem.
 */
function jsonOrProblem(value: unknown, depth: number, copy: boolean): unknown {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : new FieldProblem(`must be a finite number (got ${describe(value)})`);
  if (depth >= MAX_JSON_DEPTH) return new FieldProblem(`is nested too deeply (at most ${MAX_JSON_DEPTH} levels)`);
  if (Array.isArray(value)) {
    const out: unknown[] = copy ? new Array<unknown>(value.length) : value;
    for (let i = 0; i < value.length; i++) {
      const member = jsonOrProblem(value[i], depth + 1, copy);
      if (member instanceof FieldProblem) return new FieldProblem(member.problem, within(`[${i}]`, member.within));
      out[i] = member;
    }
    return out;
  }
  if (isObject(value)) {
    const out: Record<string, unknown> = copy ? {} : value;
    for (const key of Object.keys(value)) {
      if (value[key] === undefined) continue;
      const member = jsonOrProblem(value[key], depth + 1, copy);
      if (member instanceof FieldProblem) return new FieldProblem(member.problem, within(key, member.within));
      // An own `__proto__` member stays a member (assigning it would set the copy's prototype).
      if (copy) Object.defineProperty(out, key, { value: member, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return new FieldProblem(`must be a JSON value (got ${typeof value})`);
}

/** `value`, checked as JSON a store keeps (and copied when `copy`: what a request gives is never shared with what is kept). */
function checkedJson<T>(value: T, copy = false): T {
  const checked = jsonOrProblem(value, 0, copy);
  if (checked instanceof FieldProblem) throw checked;
  return checked as T;
}

/** Any JSON value (finite numbers, nested at most MAX_JSON_DEPTH deep), copied: what a request gives is never shared with what is kept. */
export const jsonCopy = Type.Transform(Type.Unknown())
  .Decode((value) => checkedJson(value, true))
  .Encode((value) => value);

/**
 * A JSON object of any members (configs, provider fields, provider settings): JSON throughout, as a store keeps it;
 * `copy`: decoded as a copy, so what a request gives is never shared with what is kept.
 */
export const jsonObjectField = (options: { description?: string; copy?: boolean } = {}): TTransform<TUnsafe<JsonObject>, JsonObject> => {
  const { copy, ...schemaOptions } = options;
  return Type.Transform(Type.Unsafe<JsonObject>(Type.Object({}, { ...schemaOptions, additionalProperties: true })))
    .Decode((value) => checkedJson(value, copy === true))
    .Encode((value) => value);
};

/** Text, also given as a number or a boolean (stored as its text: `3` -> `"3"`). */
export const stringValue = (): TTransform<TUnion<[TString, TNumber, TBoolean]>, string> =>
  Type.Transform(Type.Union([Type.String(), textForm(Type.Number()), textForm(Type.Boolean())]))
    .Decode((value) => String(value))
    .Encode((value) => value);

/** An object used as a map whose keys follow the NAME rule (provider names), each holding `values`. */
export function nameKeyedMap<V extends TSchema>(values: V, options: { description?: string } = {}): TRecord<TString, V> {
  return Type.Record(Type.String({ pattern: NAME_PATTERN }), values, { ...options, additionalProperties: false });
}

/** An object used as a map of any keys, each holding `values`. */
export const mapOf = <V extends TSchema>(values: V, options: { description?: string } = {}): TRecord<TString, V> =>
  Type.Record(Type.String(), values, options);
