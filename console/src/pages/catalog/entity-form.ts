/**
 * The form of one catalog entity, made from its kind's fields (kinds.ts): each input is named by the member's
 * path, so the server's `details.field` finds it. Reading the form writes into a copy of the entity as it was,
 * so members the form does not show survive an update.
 */
import type { JsonObject } from "@corral/contracts";
import { ApiError } from "../../api.js";
import { field, type Field } from "../../components/form.js";
import { getPath, setPath } from "./json-path.js";
import type { EntityField } from "./kinds.js";

export interface EntityForm {
  fields: Field[];
  /** The entity the form describes; a JSON or number the user typed wrong is a 400 naming its field. */
  read(): JsonObject;
}

/** Known names per field path (for a `choice`'s options and a `list`'s hint). */
export type KnownNames = ReadonlyMap<string, readonly string[]>;

const DURATION = /^[0-9]+[smhd]?$/;

function shown(spec: EntityField, value: unknown): string {
  if (value === undefined || value === null) return "";
  switch (spec.kind) {
    case "list":
      return Array.isArray(value) ? value.join(", ") : String(value);
    case "json":
      return JSON.stringify(value, null, 2);
    default:
      return typeof value === "string" || typeof value === "number" ? String(value) : JSON.stringify(value);
  }
}

function parsed(spec: EntityField, text: string): unknown {
  const trimmed = text.trim();
  if (spec.kind === "list") return trimmed.split(",").map((s) => s.trim()).filter(Boolean);
  if (trimmed === "") return undefined;
  if (spec.kind === "json") {
    try {
      return JSON.parse(trimmed) as unknown;
    } catch (err) {
      throw new ApiError(400, "bad_request", `${spec.path} is not valid JSON: ${(err as Error).message}`, { field: spec.path });
    }
  }
  if (spec.kind === "duration") {
    if (!DURATION.test(trimmed)) throw new ApiError(400, "bad_request", `${spec.path} must be milliseconds or a duration like 30m, 2h, 1d`, { field: spec.path });
    return /^[0-9]+$/.test(trimmed) ? Number(trimmed) : trimmed;
  }
  return spec.kind === "text" ? text : trimmed;
}

function inputOf(spec: EntityField, value: string, known: readonly string[] | undefined): Field {
  const common = { name: spec.path, label: spec.label, value, ...(spec.required ? { required: true } : {}) };
  if (spec.kind === "choice") {
    const choices = [...new Set([...(spec.required ? [] : [""]), ...(value ? [value] : []), ...(known ?? [])])];
    return field({ ...common, type: "select", choices, ...(spec.hint ? { hint: spec.hint } : {}) });
  }
  const hint = [spec.hint, spec.kind === "list" && known?.length ? `Known: ${known.join(", ")}.` : ""].filter(Boolean).join(" ");
  return field({ ...common, type: spec.kind === "json" ? "textarea" : "text", ...(hint ? { hint } : {}) });
}

export function entityForm(specs: readonly EntityField[], entity: JsonObject | undefined, known: KnownNames): EntityForm {
  const fields = specs.map((spec) => inputOf(spec, shown(spec, getPath(entity, spec.path)), known.get(spec.path)));
  return {
    fields,
    read() {
      const result = structuredClone(entity ?? {}) as Record<string, unknown>;
      specs.forEach((spec, i) => setPath(result, spec.path, parsed(spec, fields[i]?.value() ?? "")));
      return result as JsonObject;
    },
  };
}
