/**
 * Fields only a cluster template has (docs/catalog.md, Cluster templates): a lease duration, given as milliseconds or
 * as `"10s"`, `"15m"`, `"2h"`, `"1d"`, and a DNS suffix whose refusal names the label at fault. The template's
 * declaration (clusterTemplateWriteSchema in endpoints/entity-schemas.ts) is built from them.
 */
import { Type, type TInteger, type TSchema, type TString, type TTransform, type TUnion } from "@sinclair/typebox";
import { withinBounds } from "./fields.js";
import { describe } from "./primitives.js";
import { registerPattern, withProblem } from "./problems.js";

/** What a field that takes text says of any other value (`must be a string (got 3)`, as for a required name). */
export function textOnly<T extends TSchema>(schema: T): T {
  return withProblem(schema, (value) => (typeof value === "string" || value === null ? undefined : `must be a string (got ${describe(value)})`));
}

const DURATION_PATTERN = "^-?[0-9]+[smhd]?$";
const DURATION_UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const durationProblem = (value: unknown) => `must be milliseconds or a duration such as "10s", "15m", "2h", "1d" (got ${describe(value)})`;

/** Milliseconds (`""10s""` -> 10000); a number is an integer of milliseconds. */
function durationMs(value: number | string): number {
  if (typeof value === "number") return value || 0;
  const unit = /[smhd]$/.test(value) ? value.slice(-1) : "";
  const amount = Number(unit === "" ? value : value.slice(0, -1));
  return withinBounds(amount * (DURATION_UNIT_MS[unit] ?? 1), 0, Number.MAX_SAFE_INTEGER);
}

/**
 * A duration >= 0 in milliseconds: an integer, its digits as text, or text with a unit (`s`, `m`, `h`, `d`);
 * decoded to milliseconds.
 */
export function durationField(options: { description?: string } = {}): TTransform<TUnion<[TInteger, TString]>, number> {
  const wire = Type.Union([Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), Type.String({ pattern: DURATION_PATTERN })], options);
  const pattern = new RegExp(DURATION_PATTERN);
  const refused = withProblem(wire, (value) => (typeof value === "number" || (typeof value === "string" && pattern.test(value)) ? undefined : durationProblem(value)));
  return Type.Transform(refused)
    .Decode(durationMs)
    .Encode((value) => value);
}

const DNS_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const DNS_MAX_LENGTH = 253;
const DNS_NAME_PATTERN = "^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$";

/** What is wrong with `suffix` as a template's DNS suffix: its length, or the first label that is not one. */
function dnsSuffixProblem(suffix: string): string | undefined {
  const problem = `must be a DNS suffix such as "example.com"`;
  if (suffix.length > DNS_MAX_LENGTH) return `${problem} (at most ${DNS_MAX_LENGTH} characters, got ${suffix.length})`;
  const bad = suffix.split(".").find((label) => !DNS_LABEL.test(label));
  if (bad === undefined) return undefined;
  const why = bad === "" ? "an empty label" : `label ${JSON.stringify(bad)}`;
  return `${problem}: labels are 1-63 letters, digits or '-', not starting or ending with '-' (${why})`;
}
registerPattern(DNS_NAME_PATTERN, "a DNS suffix", dnsSuffixProblem);

/** A template's DNS suffix: dot-separated labels of 1-63 letters, digits and '-', not starting or ending with '-'. */
export const templateDnsSuffixField = (options: { description?: string } = {}): TString =>
  textOnly(Type.String({ ...options, pattern: DNS_NAME_PATTERN, maxLength: DNS_MAX_LENGTH }));
