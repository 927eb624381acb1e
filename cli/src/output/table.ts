/** Plain text tables: a header row and aligned columns, two spaces apart, no borders (stable for scripts). */

export interface Column<Row> {
  header: string;
  value(row: Row): string;
}

export function renderTable<Row>(columns: readonly Column<Row>[], rows: readonly Row[]): string {
  const cells = [columns.map((c) => c.header), ...rows.map((row) => columns.map((c) => oneLine(c.value(row))))];
  const widths = columns.map((_c, i) => Math.max(...cells.map((line) => (line[i] ?? "").length)));
  return cells.map((line) => line.map((cell, i) => (i === line.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  ").trimEnd()).join("\n");
}

/** Key/value lines for one object. */
export function renderFields(fields: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(0, ...fields.map(([key]) => key.length));
  return fields.map(([key, value]) => `${`${key}:`.padEnd(width + 1)}  ${oneLine(value)}`).join("\n");
}

/**
 * A table for any JSON answer: an array of objects gets a column per key whose values are short (scalars and
 * short lists), an object of objects a NAME column first, an object key/value lines, a scalar itself.
 */
export function autoTable(value: unknown): string {
  if (value === undefined) return "";
  if (Array.isArray(value)) {
    if (value.length === 0) return "(none)";
    if (value.every(isPlainObject)) return objectsTable(value);
    return value.map(cell).join("\n");
  }
  if (isPlainObject(value)) {
    const entries = Object.entries(value);
    if (entries.length > 0 && entries.every(([, v]) => isPlainObject(v))) {
      return objectsTable(entries.map(([name, v]) => ({ name, ...(v as Record<string, unknown>) })));
    }
    return renderFields(entries.map(([key, v]) => [key, cell(v)] as const));
  }
  return cell(value);
}

function objectsTable(rows: Array<Record<string, unknown>>): string {
  const keys: string[] = [];
  for (const row of rows) for (const key of Object.keys(row)) if (!keys.includes(key) && isShown(rows, key)) keys.push(key);
  return renderTable(
    keys.map((key) => ({ header: key.toUpperCase(), value: (row: Record<string, unknown>) => cell(row[key]) })),
    rows,
  );
}

/** Columns whose values are nested objects (other than `{name: x}`) are left to `-o json`/`-o yaml`. */
function isShown(rows: Array<Record<string, unknown>>, key: string): boolean {
  return rows.every((row) => {
    const value = row[key];
    if (!isPlainObject(value)) return true;
    return isNameRef(value);
  });
}

/** `{name: "x"}`: a reference to an entity by name, shown as its name. */
function isNameRef(value: Record<string, unknown>): boolean {
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === "name" && typeof value["name"] === "string";
}

/** One cell: scalars as they are, short lists comma-joined, anything else as compact JSON. */
export function cell(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v !== "object" || v === null)) return value.join(",");
  if (isPlainObject(value) && isNameRef(value)) return String(value["name"]);
  return JSON.stringify(value);
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ");
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
