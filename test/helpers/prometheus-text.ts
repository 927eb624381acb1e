/**
 * A parser of the Prometheus text exposition format (version 0.0.4), strict enough that a test reading a scrape
 * through it checks the format: every line is a comment, `# HELP`, `# TYPE` or a sample, label values are quoted
 * and escaped, values are numbers (or NaN, +Inf, -Inf), and a sample belongs to a declared metric family.
 */

export interface Sample {
  /** The series' name (`x_bucket`, `x_sum`, `x_count` for a histogram `x`). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  /** Family name -> type (`counter`, `gauge`, `histogram`, `summary`, `untyped`). */
  types: Map<string, string>;
  help: Map<string, string>;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);
const SUFFIXES = ["_bucket", "_sum", "_count", "_total", "_created"];

/** As Prometheus reads them (Go's ParseFloat): NaN and Inf in any case; prom-client writes `Nan`. */
function parseValue(text: string, line: string): number {
  const lower = text.toLowerCase();
  if (lower === "+inf" || lower === "inf") return Infinity;
  if (lower === "-inf") return -Infinity;
  if (lower === "nan") return NaN;
  const n = Number(text);
  if (text === "" || Number.isNaN(n)) throw new Error(`not a sample value: "${text}" in line: ${line}`);
  return n;
}

/** Reads `{a="x",b="y"}` from the start of `rest`; answers the labels and what follows the closing brace. */
function parseLabels(rest: string, line: string): { labels: Record<string, string>; after: string } {
  const labels: Record<string, string> = {};
  let i = 1;
  for (;;) {
    if (rest[i] === "}") return { labels, after: rest.slice(i + 1) };
    const name = LABEL_NAME.exec(rest.slice(i))?.[0];
    if (!name || rest[i + name.length] !== "=" || rest[i + name.length + 1] !== '"') throw new Error(`bad label in line: ${line}`);
    i += name.length + 2;
    let value = "";
    for (;;) {
      const c = rest[i];
      if (c === undefined) throw new Error(`unterminated label value in line: ${line}`);
      i++;
      if (c === '"') break;
      if (c !== "\\") {
        value += c;
        continue;
      }
      const escaped = rest[i++];
      if (escaped === "n") value += "\n";
      else if (escaped === "\\" || escaped === '"') value += escaped;
      else throw new Error(`bad escape in line: ${line}`);
    }
    if (name in labels) throw new Error(`label ${name} repeated in line: ${line}`);
    labels[name] = value;
    if (rest[i] === ",") i++;
    else if (rest[i] !== "}") throw new Error(`expected , or } in line: ${line}`);
  }
}

function familyOf(sample: string, types: Map<string, string>): string | undefined {
  if (types.has(sample)) return sample;
  for (const suffix of SUFFIXES) {
    if (sample.endsWith(suffix) && types.has(sample.slice(0, -suffix.length))) return sample.slice(0, -suffix.length);
  }
  return undefined;
}

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/.exec(line);
      if (!m) continue; // a plain comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (kind === "TYPE") {
        if (!TYPES.has(rest)) throw new Error(`unknown metric type in line: ${line}`);
        if (types.has(name)) throw new Error(`metric ${name} declared twice`);
        types.set(name, rest);
      } else help.set(name, rest);
      continue;
    }
    const name = NAME.exec(line)?.[0];
    if (!name) throw new Error(`not a sample line: ${line}`);
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith("{")) {
      const parsed = parseLabels(rest, line);
      labels = parsed.labels;
      rest = parsed.after;
    }
    const parts = rest.trim().split(/\s+/);
    if (!rest.startsWith(" ") || parts.length < 1 || parts.length > 2) throw new Error(`bad sample line: ${line}`);
    if (familyOf(name, types) === undefined) throw new Error(`sample ${name} of no declared metric`);
    samples.push({ name, labels, value: parseValue(parts[0] ?? "", line) });
  }
  return { types, help, samples };
}

/** The samples of `name` whose labels include `labels`. */
export function samplesOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return exposition.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The sum of the values of `name`'s samples whose labels include `labels` (0 when there are none). */
export function valueOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  return samplesOf(exposition, name, labels).reduce((sum, s) => sum + s.value, 0);
}

/** GETs a `/metrics` URL and parses it; throws on a non-200 answer or a malformed body. */
export async function scrape(url: string): Promise<Exposition> {
  const res = await fetch(url);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status} ${text}`);
  if (!res.headers.get("content-type")?.startsWith("text/plain")) throw new Error(`GET ${url}: content-type ${res.headers.get("content-type")}`);
  return parseExposition(text);
}
