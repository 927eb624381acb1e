/**
 * The part of JSON Schema (draft 2020-12, as OpenAPI 3.1 uses it) that the endpoint table's schemas are written in,
 * and small builders for it. Plain data: the schemas can be printed into an API description or fed to a validator.
 */
export interface JsonSchema {
  type?: "string" | "integer" | "number" | "boolean" | "object" | "array" | "null";
  description?: string;
  properties?: Readonly<Record<string, JsonSchema>>;
  required?: readonly string[];
  /** `false`: no other keys; a schema: what every other key holds. Absent: any other key. */
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: readonly (string | number | boolean | null)[];
  anyOf?: readonly JsonSchema[];
  minimum?: number;
  /** For upload bodies: raw bytes. */
  contentMediaType?: string;
}

/** Any JSON value. */
export const anyJson: JsonSchema = {};
export const string: JsonSchema = { type: "string" };
export const integer: JsonSchema = { type: "integer" };
export const number: JsonSchema = { type: "number" };
export const boolean: JsonSchema = { type: "boolean" };
/** Whole milliseconds or seconds since the epoch, or a count. */
export const count: JsonSchema = { type: "integer", minimum: 0 };
/** A JSON object with any keys (config trees, provider settings). */
export const anyObject: JsonSchema = { type: "object" };
/** Raw bytes (an upload body). */
export const bytes: JsonSchema = { type: "string", contentMediaType: "application/octet-stream" };

export const arrayOf = (items: JsonSchema): JsonSchema => ({ type: "array", items });
export const oneOfValues = (values: readonly string[]): JsonSchema => ({ type: "string", enum: values });
/** An object used as a map: any keys, each holding `values`. */
export const recordOf = (values: JsonSchema): JsonSchema => ({ type: "object", additionalProperties: values });
export const either = (...schemas: JsonSchema[]): JsonSchema => ({ anyOf: schemas });

export interface ObjectOptions {
  optional?: Readonly<Record<string, JsonSchema>>;
  /** Keys beyond the listed ones. @default false (the listed keys are all there is) */
  additionalProperties?: boolean | JsonSchema;
}

/** An object with `required` keys, `optional` ones and, unless allowed, nothing else. */
export function objectOf(required: Readonly<Record<string, JsonSchema>>, options: ObjectOptions = {}): JsonSchema {
  const requiredKeys = Object.keys(required);
  return {
    type: "object",
    properties: { ...required, ...options.optional },
    ...(requiredKeys.length > 0 ? { required: requiredKeys } : {}),
    additionalProperties: options.additionalProperties ?? false,
  };
}
