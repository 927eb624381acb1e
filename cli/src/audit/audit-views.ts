/** How audit entries look: a table of a listing, and lines printed one poll at a time while following. */
import type { ListedAuditEntry } from "@corral/contracts";
import { stringify } from "yaml";
import type { OutputFormat } from "../output/format.js";
import { renderTable, type Column } from "../output/table.js";

const dash = (text: string) => text || "-";

export const AUDIT_COLUMNS: readonly Column<ListedAuditEntry>[] = [
  { header: "TIME", value: (e) => e.time },
  { header: "TENANT", value: (e) => dash(e.tenant) },
  { header: "USER", value: (e) => dash(e.user) },
  { header: "METHOD", value: (e) => e.method },
  { header: "ROUTE", value: (e) => e.route },
  { header: "TARGET", value: (e) => dash(e.target) },
  { header: "STATUS", value: (e) => `${e.status}${e.failedTask ? ` (${e.failedTask})` : ""}` },
];

/** A listing, newest first; `next` says how to go on. */
export function auditTable(entries: readonly ListedAuditEntry[], next: string | undefined): string {
  const table = entries.length === 0 ? "no audit entries" : renderTable(AUDIT_COLUMNS, entries);
  return next ? `${table}\nolder entries: --after ${next}` : table;
}

/**
 * Entries printed as they come: in a table, a header first and columns as wide as the widest value so far; in
 * json one compact entry per line; in yaml one document per entry.
 */
export function auditLineWriter(format: OutputFormat, write: (text: string) => void): (entries: readonly ListedAuditEntry[]) => void {
  if (format === "json") return (entries) => entries.forEach((e) => write(`${JSON.stringify(e)}\n`));
  if (format === "yaml") return (entries) => entries.forEach((e) => write(`---\n${stringify(e)}`));
  const widths = AUDIT_COLUMNS.map((c) => c.header.length);
  const line = (cells: readonly string[]) =>
    `${cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  ").trimEnd()}\n`;
  let headerWritten = false;
  return (entries) => {
    const rows = entries.map((e) => AUDIT_COLUMNS.map((c) => c.value(e).replace(/\s*\n\s*/g, " ")));
    for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
    if (!headerWritten) {
      write(line(AUDIT_COLUMNS.map((c) => c.header)));
      headerWritten = true;
    }
    rows.forEach((row) => write(line(row)));
  };
}
