/**
 * docs/api.md's endpoint table against the endpoint table (contracts/src/endpoints): every REST route and event
 * stream is a row with its endpoint and role, and the doc lists nothing else, so the reference cannot drift.
 */
import { readFileSync } from "node:fs";
import test from "ava";
import { endpointList, openApiPath } from "@corral/contracts";

const API_DOC = new URL("../../docs/api.md", import.meta.url);
const TABLE_HEADING = "## Endpoints";
const COLUMNS = ["method", "path", "endpoint", "role", "notes"];

interface Row {
  method: string;
  path: string;
  endpoint: string;
  role: string;
}

/** Splits a markdown table line into its cells (`\|` is a pipe inside a cell). */
function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, "")
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim());
}

const unquoted = (cell: string) => cell.replace(/^`|`$/g, "");

/** The rows of the first table after the "Endpoints" heading. */
function documentedRows(markdown: string): { header: string[]; rows: Row[] } {
  const lines = markdown.split("\n");
  const start = lines.indexOf(TABLE_HEADING);
  if (start < 0) throw new Error(`docs/api.md has no "${TABLE_HEADING}" heading`);
  const first = lines.findIndex((line, i) => i > start && line.startsWith("|"));
  const table: string[] = [];
  for (let i = first; i >= 0 && i < lines.length && lines[i]!.startsWith("|"); i++) table.push(lines[i]!);
  const [header = "", separator = "", ...body] = table;
  if (!/^\|(\s*:?-+:?\s*\|)+$/.test(separator)) throw new Error("the endpoint table has no separator line");
  const rows = body.map((line) => {
    const [method = "", path = "", endpoint = "", role = ""] = cells(line);
    return { method, path: unquoted(path), endpoint: unquoted(endpoint), role: unquoted(role) };
  });
  return { header: cells(header), rows };
}

/** What the endpoint table serves over HTTP: every REST route and every event stream, with its row and role. */
function servedRows(): Row[] {
  return endpointList().flatMap(({ name, endpoint }) => {
    const routes = endpoint.rest ? endpoint.rest.routes.map((r) => ({ route: r, role: endpoint.rest!.access })) : [];
    const streams = endpoint.stream ? [{ route: endpoint.stream.route, role: endpoint.stream.access }] : [];
    return [...routes, ...streams].map(({ route, role }) => ({ method: route.method, path: openApiPath(route.path), endpoint: name, role }));
  });
}

const key = (row: Row) => `${row.method} ${row.path} ${row.endpoint} ${row.role}`;

test("api doc - the endpoint table of docs/api.md lists every route of the endpoint table with its row and role, and nothing else", (t) => {
  const { header, rows } = documentedRows(readFileSync(API_DOC, "utf8"));
  t.deepEqual(header, COLUMNS, "the table's columns");
  const documented = rows.map(key);
  const served = servedRows().map(key);
  t.true(served.length > 50, "the endpoint table has its routes");
  t.deepEqual(
    documented.filter((row) => !served.includes(row)),
    [],
    "rows of docs/api.md that the endpoint table does not serve (method, path, endpoint or role differ)",
  );
  t.deepEqual(
    served.filter((row) => !documented.includes(row)),
    [],
    "routes of the endpoint table missing from docs/api.md",
  );
  t.is(new Set(documented).size, documented.length, "each route once");
});

test("api doc - the table reader sees a changed role or a missing route", (t) => {
  const doc = [
    "# x",
    TABLE_HEADING,
    "",
    "| method | path | endpoint | role | notes |",
    "|---|---|---|---|---|",
    "| GET | `/status` | `gateway.status` | `user` | `a\\|b` |",
    "",
    "| GET | `/tenants` | `tenancy.tenants.list` | `superadmin` | after the table |",
  ].join("\n");
  const { header, rows } = documentedRows(doc);
  t.deepEqual(header, COLUMNS);
  t.deepEqual(rows, [{ method: "GET", path: "/status", endpoint: "gateway.status", role: "user" }], "only the first table, pipes escaped");
  const served = servedRows().map(key);
  t.false(served.includes(key(rows[0]!)), "a wrong role is not a served route");
});

/** `METHOD path` of every `curl ... $API/<path>` call in a markdown text (`-XPOST` sets the method; GET otherwise). */
function curlCalls(markdown: string): Array<{ method: string; path: string }> {
  return [...markdown.matchAll(/curl\b[^\n]*?\$API(\/[^\s'"|)]*)/g)].map((m) => ({
    method: /-X\s*(GET|POST|PUT|DELETE)\b/.exec(m[0])?.[1] ?? "GET",
    path: m[1]!,
  }));
}

/** Whether `path` (its `$VAR` segments standing for any value) is a route of the endpoint table for `method`. */
function isTableRoute(method: string, path: string): boolean {
  const segments = path.split("/").filter(Boolean);
  return endpointList().some(({ endpoint }) =>
    (endpoint.rest?.routes ?? []).some((r) => {
      const pattern = r.path.split("/").filter(Boolean);
      return (
        r.method === method &&
        pattern.length === segments.length &&
        pattern.every((p, i) => p.startsWith(":") || p === segments[i] || segments[i]!.startsWith("$"))
      );
    }),
  );
}

test("api doc - every call README.md shows is a route of the endpoint table (README has no API table of its own)", (t) => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const calls = curlCalls(readme);
  t.true(calls.length > 0, "README shows calls");
  t.deepEqual(
    calls.filter((c) => !isTableRoute(c.method, c.path)).map((c) => `${c.method} ${c.path}`),
    [],
    "calls in README.md that no row of the endpoint table serves",
  );
  t.false(readme.split("\n").some((line) => /^\|\s*method\s*\|/i.test(line)), "the route table is docs/api.md's, checked above");
});

test("api doc - the README check sees a call the table does not serve", (t) => {
  const calls = curlCalls("curl -s -XPOST $API/clusters/$ID/reboot $H\ncurl -s $API/clusters/$ID $H");
  t.deepEqual(calls, [
    { method: "POST", path: "/clusters/$ID/reboot" },
    { method: "GET", path: "/clusters/$ID" },
  ]);
  t.false(isTableRoute("POST", "/clusters/$ID/reboot"));
  t.true(isTableRoute("GET", "/clusters/$ID"));
});
