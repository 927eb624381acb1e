/**
 * docs/configuration.md against CONFIG_KEYS (shared/src/config.ts): the key tables list every key once, with its
 * default, and no key the configuration does not know.
 */
import { readFileSync } from "node:fs";
import test from "ava";
import { CONFIG_KEYS } from "@corral/shared";
import { markdownTables } from "./markdown.js";

const doc = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");

/** The rows of every table whose first column is `key`: key -> default cell. */
function documentedKeys(): Array<{ key: string; defaultCell: string }> {
  return markdownTables(doc)
    .filter((table) => table.header[0] === "key")
    .flatMap((table) => table.rows.map(([key = "", defaultCell = ""]) => ({ key: key.replace(/^`|`$/g, ""), defaultCell })));
}

/** The default as the table writes it: the first code span, or "none" for an empty string. */
function documentedDefault(cell: string): string {
  const code = /`([^`]*)`/.exec(cell);
  return code ? code[1]! : cell === "none" ? "" : cell;
}

test("configuration doc - every key of CONFIG_KEYS is documented once, with its default", (t) => {
  const rows = documentedKeys();
  const documented = rows.map((r) => r.key);
  const known = Object.keys(CONFIG_KEYS);
  t.deepEqual(documented.filter((k) => !known.includes(k)), [], "documented keys the configuration does not know");
  t.deepEqual(known.filter((k) => !documented.includes(k)), [], "keys missing from docs/configuration.md");
  t.is(new Set(documented).size, documented.length, "each key once");
  for (const { key, defaultCell } of rows) {
    const spec = CONFIG_KEYS[key as keyof typeof CONFIG_KEYS];
    t.is(documentedDefault(defaultCell), String(spec.default), `default of ${key}`);
  }
});
