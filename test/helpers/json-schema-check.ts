/**
 * Checks a JSON value against the JSON Schema subset of the endpoint table (contracts/src/endpoints/json-schema.ts):
 * type, properties, required, additionalProperties, items, enum, anyOf, minimum. Answers every problem found, each
 * naming where in the value it is (`$.nodes[0].id`).
 */
import type { JsonSchema } from "@corral/contracts";

const typeOf = (value: unknown): string => {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
};

function hasType(schema: JsonSchema, value: unknown): boolean {
  const actual = typeOf(value);
  return schema.type === undefined || schema.type === actual || (schema.type === "number" && actual === "integer");
}

export function schemaProblems(schema: JsonSchema, value: unknown, at = "$"): string[] {
  if (!hasType(schema, value)) return [`${at}: expected ${schema.type}, got ${typeOf(value)} ${JSON.stringify(value)?.slice(0, 80)}`];
  const problems: string[] = [];
  if (schema.enum && !schema.enum.includes(value as string)) problems.push(`${at}: ${JSON.stringify(value)} is not one of ${schema.enum.join(", ")}`);
  if (schema.minimum !== undefined && typeof value === "number" && value < schema.minimum) problems.push(`${at}: ${value} < ${schema.minimum}`);
  if (schema.anyOf && schema.anyOf.every((option) => schemaProblems(option, value, at).length > 0)) {
    problems.push(`${at}: matches none of ${schema.anyOf.length} alternatives`);
  }
  if (schema.items && Array.isArray(value)) value.forEach((item, i) => problems.push(...schemaProblems(schema.items!, item, `${at}[${i}]`)));
  if (typeOf(value) === "object") {
    const object = value as Record<string, unknown>;
    for (const key of schema.required ?? []) if (!Object.hasOwn(object, key)) problems.push(`${at}: ${key} is missing`);
    for (const [key, member] of Object.entries(object)) {
      const declared = schema.properties?.[key];
      const where = `${at}.${key}`;
      if (declared) problems.push(...schemaProblems(declared, member, where));
      else if (schema.additionalProperties === false) problems.push(`${where}: not in the schema`);
      else if (typeof schema.additionalProperties === "object") problems.push(...schemaProblems(schema.additionalProperties, member, where));
    }
  }
  return problems;
}
