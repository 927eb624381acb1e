/**
 * Just enough markdown reading for the doc tests: tables, links and heading anchors as GitHub makes them. Fenced
 * code blocks are skipped, so a `|` or `[x](y)` inside an example is not read as a table or a link.
 */

export interface MarkdownTable {
  /** The heading the table sits under ("" before any). */
  heading: string;
  header: string[];
  rows: string[][];
}

/** The lines outside fenced code blocks, with their 1-based line numbers. */
export function proseLines(markdown: string): Array<{ line: string; number: number }> {
  const out: Array<{ line: string; number: number }> = [];
  let fence: string | undefined;
  markdown.split("\n").forEach((line, i) => {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1];
    if (marker && (fence === undefined || fence === marker)) {
      fence = fence === undefined ? marker : undefined;
      return;
    }
    if (fence === undefined) out.push({ line, number: i + 1 });
  });
  return out;
}

/** A table line's cells; `\|` is a pipe inside a cell. */
export function tableCells(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, "")
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim());
}

export function markdownTables(markdown: string): MarkdownTable[] {
  const tables: MarkdownTable[] = [];
  let heading = "";
  let current: MarkdownTable | undefined;
  let previous = "";
  for (const { line } of proseLines(markdown)) {
    if (/^#{1,6} /.test(line)) heading = line.replace(/^#+ /, "");
    const isRow = line.trimStart().startsWith("|");
    if (isRow && current) current.rows.push(tableCells(line));
    else if (isRow && /^\s*\|(\s*:?-+:?\s*\|)+\s*$/.test(line) && previous.trimStart().startsWith("|")) {
      current = { heading, header: tableCells(previous), rows: [] };
      tables.push(current);
    } else if (!isRow) current = undefined;
    previous = line;
  }
  return tables;
}

export interface MarkdownLink {
  target: string;
  line: number;
}

/** Every link and image target outside code: `[text](target)`, `![alt](target)` and `<a href="target">`. */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { line, number } of proseLines(markdown)) {
    const text = line.replace(/`[^`]*`/g, "");
    for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ target: m[1]!, line: number });
    for (const m of text.matchAll(/\bhref="([^"]+)"/g)) links.push({ target: m[1]!, line: number });
  }
  return links;
}

/**
 * The anchors GitHub gives the headings of a document: lower case, punctuation but `-` and `_` dropped, spaces as
 * `-`, and `-1`, `-2` ... added to repeats.
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { line } of proseLines(markdown)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = githubSlug(m[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

export function githubSlug(heading: string): string {
  return heading
    .replace(/`([^`]*)`/g, "$1")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}
