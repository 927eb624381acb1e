/**
 * The endpoint table's schemas: TypeBox values, which are plain JSON Schema (draft 2020-12, as OpenAPI 3.1 uses it)
 * at run time, with TypeScript types derived from them (`Static` for what travels, `StaticDecode` for what a handler
 * gets after validation). Small builders keep the rows short; `JsonSchema` is the plain-data view readers of the
 * table (the API description, tests) walk.
 */
import {
  Kind,
  Type,
  TypeRegistry,
  type Static,
  type TArray,
  type TBoolean,
  type TInteger,
  type TLiteral,
  type TNumber,
  type TObject,
  type TOptional,
  type TSchema,
  type TString,
  type TUnknown,
  type TUnsafe,
} from "@sinclair/typebox";
import type { JsonObject } from "../entities.js";

/** A schema as plain data: the keywords the table's schemas use. */
export interface JsonSchema {
  type?: "string" | "integer" | "number" | "boolean" | "object" | "array" | "null";
  description?: string;
  properties?: Readonly<Record<string, JsonSchema>>;
  required?: readonly string[];
  /** `false`: no other keys; a schema: what every other key holds. Absent: any other key. */
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: readonly (string | number | boolean | null)[];
  const?: string | number | boolean | null;
  anyOf?: readonly JsonSchema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  pattern?: string;
  /** For upload bodies: raw bytes. */
  contentMediaType?: string;
}

/** The TypeBox kind of a string that is one of listed values (JSON Schema `enum`, checked by the registered kind). */
const STRING_ENUM = "StringEnum";
if (!TypeRegistry.Has(STRING_ENUM)) {
  TypeRegistry.Set<{ enum: readonly string[] }>(STRING_ENUM, (schema, value) => typeof value === "string" && schema.enum.includes(value));
}

/** Any JSON value. */
export const anyJson: TUnknown = Type.Unknown();
export const string: TString = Type.String();
export const integer: TInteger = Type.Integer();
export const number: TNumber = Type.Number();
export const boolean: TBoolean = Type.Boolean();
/** Whole milliseconds or seconds since the epoch, or a count. */
export const count: TInteger = Type.Integer({ minimum: 0 });
/** A JSON object with any keys (config trees, provider settings). */
export const anyObject: TUnsafe<JsonObject> = Type.Unsafe<JsonObject>(Type.Object({}, { additionalProperties: true }));
/** Raw bytes (an upload body). */
export const bytes: TString = Type.String({ contentMediaType: "application/octet-stream" });

/** `schema` with the TypeScript type `T`: for replies whose type is written by hand (entities.ts); the same object. */
export function typedSchema<T>(schema: { [Kind]: string }): TUnsafe<T> {
  return schema as unknown as TUnsafe<T>;
}

export const arrayOf = <T extends TSchema>(items: T, options: { minItems?: number; maxItems?: number; description?: string } = {}): TArray<T> =>
  Type.Array(items, options);

/** A string that is one of `values` (any other string is refused). */
export function oneOfValues<const V extends string>(values: readonly V[], options: { description?: string } = {}): TUnsafe<V> {
  return Type.Unsafe<V>({ ...options, [Kind]: STRING_ENUM, type: "string", enum: [...values] });
}

/** Exactly `value`. */
export const exactly = <const V extends string | number | boolean>(value: V): TLiteral<V> => Type.Literal(value);

/** An object used as a map: any keys, each holding `values`. */
export function recordOf<V extends TSchema>(values: V): TUnsafe<Record<string, Static<V>>> {
  return Type.Unsafe<Record<string, Static<V>>>(Type.Object({}, { additionalProperties: values }));
}

export const either = <T extends TSchema[]>(...schemas: [...T]) => Type.Union(schemas);

export interface ObjectOptions<O extends Readonly<Record<string, TSchema>>> {
  optional?: O;
  /** Keys beyond the listed ones. @default false (the listed keys are all there is) */
  additionalProperties?: boolean | TSchema;
  description?: string;
}

type Optionals<O extends Readonly<Record<string, TSchema>>> = { -readonly [K in keyof O]: TOptional<O[K]> };

/** An object with `required` keys, `optional` ones and, unless allowed, nothing else. */
export function objectOf<R extends Readonly<Record<string, TSchema>>, O extends Readonly<Record<string, TSchema>> = {}>(
  required: R,
  options: ObjectOptions<O> = {},
): TObject<{ -readonly [K in keyof R]: R[K] } & Optionals<O>> {
  const optional = Object.fromEntries(Object.entries(options.optional ?? {}).map(([key, schema]) => [key, Type.Optional(schema)]));
  const properties = { ...required, ...optional } as { -readonly [K in keyof R]: R[K] } & Optionals<O>;
  return Type.Object(properties, {
    additionalProperties: options.additionalProperties ?? false,
    ...(options.description !== undefined ? { description: options.description } : {}),
  });
}
