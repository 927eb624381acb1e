/**
 * Building blocks for turning untrusted decoded JSON into canonical entities.
 *
 * Every check throws a `BadRequestError` whose message starts with the field path and says what is wrong
 * (`constraints.size.min must be >= 1 (got 0)`), with `details: { field: <path> }`. Paths are dotted
 * (`defaults.services[2]`); the empty path is the request body itself and reads as `body`.
 */
import type { Json, JsonObject } from "../entities.js";
import { BadRequestError } from "../errors.js";

/** A plain object as produced by `JSON.parse` (or msgpack with maps as objects). */
export type RawObject = Record<string, unknown>;

/** Longest accepted name (the NAME rule: docs/api.md, Validation). */
export const MAX_NAME_LENGTH = 255;
const NAME_PATTERN = /^[A-Za-z0-9._-]+$/;
/** Deepest nesting accepted in free-form JSON (configs, provider settings); guards the recursion. */
export const MAX_JSON_DEPTH = 64;

const INTEGER_STRING = /^-?[0-9]+$/;
const DURATION_STRING = /^(-?[0-9]+)([smhd])?$/;
const DURATION_UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

// ---------------------------------------------------------------------------------------------------------------
// Paths and failures

/** The readable form of a path: the empty path is the body. */
export function label(path: string): string {
  return path === "" ? "body" : path;
}

/** `child("defaults", "services")` -> `defaults.services`; `child("", "name")` -> `name`. */
export function child(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

/** `item("defaults.services", 2)` -> `defaults.services[2]`. */
export function item(path: string, index: number): string {
  return `${label(path)}[${index}]`;
}

/** Throws the 400 for `path`: the message is `<path> <problem>`. */
export function fail(path: string, problem: string): never {
  throw new BadRequestError(`${label(path)} ${problem}`, { field: label(path) });
}

/** Throws the 400 for `path` with a statement about it: the message is `<path>: <statement>`. */
export function failAbout(path: string, statement: string): never {
  throw new BadRequestError(`${label(path)}: ${statement}`, { field: label(path) });
}

/**
 * A short rendering of an offending client value for messages. Never converts an object implicitly: a client
 * object whose `toString` is not a function makes `String(value)` and template literals throw.
 */
export function describe(value: unknown): string {
  if (typeof value === "string") {
    const quoted = JSON.stringify(value);
    return quoted.length > 60 ? `${quoted.slice(0, 57)}..."` : quoted;
  }
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  return typeof value;
}

// ---------------------------------------------------------------------------------------------------------------
// Objects

/** True for plain objects only (not arrays, null, class instances such as Date or Uint8Array). */
export function isObject(value: unknown): value is RawObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Reads an own property only, so `constructor` or `__proto__` never come from the prototype. */
export function getOwn(obj: RawObject, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/**
 * Sets an own enumerable property. Plain assignment of a key such as `__proto__` (a valid name under the
 * NAME rule, and a key `JSON.parse` happily produces) would change the prototype instead.
 */
export function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  // msgpack decoders (ours included) rename or drop `__proto__` keys, so such a key could never be read back.
  if (key === "__proto__") fail(key, "is a reserved key and cannot be used as an object key");
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * `undefined` and `null` both mean "not given" for optional fields. A required field given as `null` is
 * reported as having the wrong type (`must be a string (got null)`), an absent one as `is required`.
 */
export function isAbsent(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

/** The request body, or a nested object: must be a plain JSON object. */
export function requireObject(value: unknown, path: string): RawObject {
  if (value === undefined && path !== "") fail(path, "is required");
  if (isObject(value)) return value;
  return fail(path, path === "" ? "must be a JSON object" : `must be an object (got ${describe(value)})`);
}

/** An optional nested object; `undefined` when absent. */
export function optionalObject(value: unknown, path: string): RawObject | undefined {
  return isAbsent(value) ? undefined : requireObject(value, path);
}

// ---------------------------------------------------------------------------------------------------------------
// Strings and names

/** A required string (may be empty). */
export function requireString(value: unknown, path: string): string {
  if (value === undefined) fail(path, "is required");
  if (typeof value !== "string") fail(path, `must be a string (got ${describe(value)})`);
  return value;
}

/** An optional string; `undefined` when absent. */
export function optionalString(value: unknown, path: string): string | undefined {
  return isAbsent(value) ? undefined : requireString(value, path);
}

/** A required, non-empty string. */
export function requireNonEmptyString(value: unknown, path: string): string {
  const s = requireString(value, path);
  if (s === "") fail(path, "must not be empty");
  return s;
}

/** True when `value` satisfies the NAME rule: `^[A-Za-z0-9._-]+$`, at most 255 characters. */
export function isValidName(value: unknown): value is string {
  return typeof value === "string" && nameProblem(value, false) === undefined;
}

/** The reason `s` breaks the NAME rule, or `undefined` when it does not; `showValue` quotes `s` in it. */
export function nameProblem(s: string, showValue: boolean): string | undefined {
  if (s === "") return "must not be empty";
  if (s.length > MAX_NAME_LENGTH) return `must be at most ${MAX_NAME_LENGTH} characters (got ${s.length})`;
  // Names become object keys (provider maps, assignments); msgpack decoders rename this one.
  if (s === "__proto__") return "must not be the reserved name __proto__";
  if (NAME_PATTERN.test(s)) return undefined;
  const got = showValue ? ` (got ${describe(s)})` : "";
  return `must contain only letters, digits, '.', '_' and '-'${got}`;
}

/**
 * A required name under the NAME rule (`^[A-Za-z0-9._-]+$`, at most 255 characters).
 * @param field the path used in the error, e.g. `name` or `defaults.provider`.
 */
export function parseName(value: unknown, field: string): string {
  const s = requireString(value, field);
  const problem = nameProblem(s, true);
  if (problem !== undefined) fail(field, problem);
  return s;
}

/** Longest opaque identifier (provisioner ids and the like) accepted. */
export const MAX_ID_LENGTH = 255;

/** An opaque identifier: any non-empty string up to MAX_ID_LENGTH characters (ids are not NAMEs). */
export function parseId(value: unknown, field: string): string {
  const s = requireString(value, field);
  if (s.length === 0) fail(field, "must not be empty");
  if (s.length > MAX_ID_LENGTH) fail(field, `must be at most ${MAX_ID_LENGTH} characters (got ${s.length})`);
  return s;
}

/** An optional name; `undefined` when absent. */
export function optionalName(value: unknown, path: string): string | undefined {
  return isAbsent(value) ? undefined : parseName(value, path);
}

/** Checks an object key against the NAME rule; the error names the key inside the object at `path`. */
export function checkNameKey(key: string, path: string): void {
  const problem = nameProblem(key, false);
  if (problem !== undefined) fail(path, `key ${describe(key)} ${problem}`);
}

/**
 * A required array of names, kept exactly as given (order and repeats), so an imported catalog exports back
 * unchanged; consumers treat these lists as sets.
 */
export function parseNameList(value: unknown, path: string): string[] {
  if (value === undefined) fail(path, "is required");
  if (!Array.isArray(value)) fail(path, `must be an array of names (got ${describe(value)})`);
  return value.map((entry: unknown, i) => parseName(entry, item(path, i)));
}

/** An optional array of names; `undefined` when absent. */
export function optionalNameList(value: unknown, path: string): string[] | undefined {
  return isAbsent(value) ? undefined : parseNameList(value, path);
}

/**
 * An object of string values. Numbers and booleans are converted to their string form; `null`, arrays and
 * objects are refused. Keys are kept as given.
 */
export function parseStringMap(value: unknown, path: string): Record<string, string> {
  const obj = requireObject(value, path);
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(obj)) {
    if (v === undefined) continue;
    if (typeof v === "string") setOwn(out, key, v);
    else if ((typeof v === "number" && Number.isFinite(v)) || typeof v === "boolean") setOwn(out, key, String(v));
    else fail(child(path, key), `must be a string (got ${describe(v)})`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Numbers and booleans

/** Bounds for integer fields. */
export interface IntegerBounds {
  /** @default 0 */
  min?: number;
}

function checkIntegerRange(n: number, path: string, min: number): number {
  if (n < min) fail(path, `must be >= ${min} (got ${n})`);
  if (n > Number.MAX_SAFE_INTEGER) fail(path, `must be <= ${Number.MAX_SAFE_INTEGER}`);
  return n === 0 ? 0 : n; // no -0
}

/**
 * A required integer. JSON numbers with an integral value and strings of decimal digits (`"3"`, `"-2"`) are
 * accepted; `"3.5"`, `""`, `"abc"`, `3.5` are refused, as are values below `min` or above 2^53 - 1.
 */
export function parseInteger(value: unknown, path: string, bounds: IntegerBounds = {}): number {
  const min = bounds.min ?? 0;
  if (value === undefined) fail(path, "is required");
  let n: number;
  if (typeof value === "number" && Number.isInteger(value)) n = value;
  else if (typeof value === "string" && INTEGER_STRING.test(value)) n = Number(value);
  else fail(path, `must be an integer (got ${describe(value)})`);
  return checkIntegerRange(n, path, min);
}

/** An optional integer; `undefined` when absent (`null` counts as absent). */
export function optionalInteger(value: unknown, path: string, bounds: IntegerBounds = {}): number | undefined {
  return isAbsent(value) ? undefined : parseInteger(value, path, bounds);
}

/**
 * A duration in milliseconds, >= 0: an integer (or numeric string) of milliseconds, or a string with a unit
 * suffix `s`, `m`, `h` or `d` (`"10s"` -> 10000, `"1d"` -> 86400000). Absent means 0.
 */
export function parseDurationMs(value: unknown, path: string): number {
  if (isAbsent(value)) return 0;
  if (typeof value === "number") return parseInteger(value, path);
  const match = typeof value === "string" ? DURATION_STRING.exec(value) : null;
  if (match === null) {
    fail(path, `must be milliseconds or a duration such as "10s", "15m", "2h", "1d" (got ${describe(value)})`);
  }
  const unit = match[2] === undefined ? 1 : (DURATION_UNIT_MS[match[2]] ?? 1);
  return checkIntegerRange(Number(match[1]) * unit, path, 0);
}

/** An optional boolean, also accepting the strings `"true"` and `"false"`; absent gives `fallback`. */
export function parseBoolean(value: unknown, path: string, fallback: boolean): boolean {
  if (isAbsent(value)) return fallback;
  if (value === true || value === "true") return true;
  if (value === false || value === "false") return false;
  return fail(path, `must be a boolean (got ${describe(value)})`);
}

// ---------------------------------------------------------------------------------------------------------------
// Free-form JSON

/**
 * A deep copy of any JSON value: strings, finite numbers, booleans, null, arrays and plain objects.
 * Object members whose value is `undefined` are dropped (as `JSON.stringify` does); anything else that JSON
 * cannot carry is refused, as is nesting deeper than {@link MAX_JSON_DEPTH}.
 */
export function parseJsonValue(value: unknown, path: string, depth = 0): Json {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) fail(path, `must be a finite number (got ${describe(value)})`);
    return value;
  }
  if (depth >= MAX_JSON_DEPTH) fail(path, `is nested too deeply (at most ${MAX_JSON_DEPTH} levels)`);
  if (Array.isArray(value)) return value.map((v: unknown, i) => parseJsonValue(v, item(path, i), depth + 1));
  if (isObject(value)) return copyJsonMembers(value, path, depth + 1);
  return fail(path, `must be a JSON value (got ${value === undefined ? "undefined" : typeof value})`);
}

function copyJsonMembers(obj: RawObject, path: string, depth: number): JsonObject {
  const out: JsonObject = {};
  for (const [key, v] of Object.entries(obj)) {
    if (v !== undefined) setOwn(out, key, parseJsonValue(v, child(path, key), depth));
  }
  return out;
}

/** A required JSON object (may be empty), deep-copied. */
export function parseJsonObject(value: unknown, path: string): JsonObject {
  return copyJsonMembers(requireObject(value, path), path, 1);
}
