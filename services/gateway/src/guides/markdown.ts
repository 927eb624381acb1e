/**
 * A small markdown-to-HTML renderer for the project's own guides (docs/*.md): headings with GitHub's anchors,
 * paragraphs, fenced code, tables, lists (nested blocks indented under an item), block quotes, and inline code,
 * links, images, bold and italics. Every character of the source is escaped; the only markup is what the renderer
 * writes, and a link's target is whatever `linkTarget` makes of it, so no source can put a script or an attribute of
 * its own on the page. Written here rather than taken from a package because the guides use this subset only.
 */

export interface RenderOptions {
  /**
   * Where a link or image of the source points on the served page: a URL, or undefined to show its text without a
   * link (a file that is not served).
   */
  linkTarget(href: string): string | undefined;
}

export interface RenderedMarkdown {
  html: string;
  /** The text of the first heading, "" when there is none. */
  title: string;
}

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/** The anchor GitHub gives a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
export function headingSlug(heading: string): string {
  return plainText(heading)
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** A heading's text without its inline markup (code spans, links, emphasis). */
function plainText(inline: string): string {
  return inline
    .replace(/`([^`]*)`/g, "$1")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\*\*([^*]+)\*\*/g, "$1")
    .replace(/\*([^*]+)\*/g, "$1");
}

export function renderMarkdown(source: string, options: RenderOptions): RenderedMarkdown {
  const state = { title: "", slugs: new Map<string, number>() };
  const html = renderBlocks(source.replace(/\r\n?/g, "\n").split("\n"), options, state);
  return { html, title: state.title };
}

interface RenderState {
  title: string;
  /** Headings seen so far by slug, so a repeated heading gets `-1`, `-2`, ... as on GitHub. */
  slugs: Map<string, number>;
}

const FENCE = /^(\s*)(```+|~~~+)\s*([\w-]*)\s*$/;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEPARATOR = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function renderBlocks(lines: string[], options: RenderOptions, state: RenderState): string {
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === "") {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const [, indent = "", marker = "", language = ""] = fence;
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i]!.trim().startsWith(marker)) body.push(stripIndent(lines[i++]!, indent.length));
      i++;
      const cls = language ? ` class="language-${escapeHtml(language)}"` : "";
      out.push(`<pre><code${cls}>${escapeHtml(body.join("\n"))}</code></pre>`);
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      const text = heading[2]!;
      const base = headingSlug(text);
      const seen = state.slugs.get(base) ?? 0;
      state.slugs.set(base, seen + 1);
      const id = seen === 0 ? base : `${base}-${seen}`;
      if (!state.title) state.title = plainText(text).trim();
      out.push(`<h${level} id="${escapeHtml(id)}">${renderInline(text, options)}</h${level}>`);
      i++;
      continue;
    }
    if (line.trimStart().startsWith("|") && i + 1 < lines.length && TABLE_SEPARATOR.test(lines[i + 1]!)) {
      const rows: string[] = [];
      while (i < lines.length && lines[i]!.trimStart().startsWith("|")) rows.push(lines[i++]!);
      out.push(renderTable(rows, options));
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const end = listEnd(lines, i);
      out.push(renderList(lines.slice(i, end), options, state));
      i = end;
      continue;
    }
    if (/^\s*>/.test(line)) {
      const quoted: string[] = [];
      while (i < lines.length && /^\s*>/.test(lines[i]!)) quoted.push(lines[i++]!.replace(/^\s*>\s?/, ""));
      out.push(`<blockquote>${renderBlocks(quoted, options, state)}</blockquote>`);
      continue;
    }
    const paragraph: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== "" && !startsBlock(lines, i)) paragraph.push(lines[i++]!.trim());
    if (paragraph.length === 0) paragraph.push(lines[i++]!.trim());
    out.push(`<p>${renderInline(paragraph.join("\n"), options)}</p>`);
  }
  return out.join("\n");
}

/** Whether line `i` starts a block other than a paragraph, which ends the paragraph before it. */
function startsBlock(lines: string[], i: number): boolean {
  const line = lines[i]!;
  return (
    FENCE.test(line) ||
    HEADING.test(line) ||
    LIST_ITEM.test(line) ||
    /^\s*>/.test(line) ||
    (line.trimStart().startsWith("|") && i + 1 < lines.length && TABLE_SEPARATOR.test(lines[i + 1]!))
  );
}

const stripIndent = (line: string, width: number): string => line.replace(new RegExp(`^ {0,${width}}`), "");

const isOrderedMarker = (marker: string) => /\d/.test(marker);

/**
 * Where the list starting at `start` ends: at a blank line followed by a line that is neither indented nor an item,
 * or at an item of the other kind (ordered or not) at the list's own indentation.
 */
function listEnd(lines: string[], start: number): number {
  const first = LIST_ITEM.exec(lines[start]!)!;
  const indent = first[1]!.length;
  const ordered = isOrderedMarker(first[2]!);
  let i = start + 1;
  let inFence = false;
  while (i < lines.length) {
    const line = lines[i]!;
    if (FENCE.test(line)) inFence = !inFence;
    if (inFence) {
      i++;
      continue;
    }
    const leading = line.length - line.trimStart().length;
    const item = LIST_ITEM.exec(line);
    if (item && item[1]!.length === indent && isOrderedMarker(item[2]!) !== ordered) return i;
    if (line.trim() === "") {
      const next = lines.slice(i + 1).find((l) => l.trim() !== "");
      if (next === undefined) return i;
      const nextIndent = next.length - next.trimStart().length;
      if (nextIndent <= indent && !LIST_ITEM.test(next)) return i;
      i++;
      continue;
    }
    if (leading <= indent && !LIST_ITEM.test(line) && startsBlock(lines, i)) return i;
    i++;
  }
  return i;
}

function renderList(lines: string[], options: RenderOptions, state: RenderState): string {
  const first = LIST_ITEM.exec(lines[0]!)!;
  const indent = first[1]!.length;
  const ordered = isOrderedMarker(first[2]!);
  const items: string[][] = [];
  for (const line of lines) {
    const item = LIST_ITEM.exec(line);
    if (item && item[1]!.length === indent) {
      items.push([item[3]!]);
      continue;
    }
    // Continuation lines and nested blocks belong to the item above, without the item's indentation.
    const contentIndent = indent + (first[2]!.length + 1);
    items.at(-1)?.push(line.trim() === "" ? "" : stripIndent(line, contentIndent));
  }
  const start = ordered ? Number.parseInt(first[2]!, 10) : 1;
  const tag = ordered ? "ol" : "ul";
  const startAttribute = ordered && start !== 1 ? ` start="${start}"` : "";
  const body = items.map((lines) => {
    const item = [...lines];
    while (item.length > 1 && item.at(-1)!.trim() === "") item.pop();
    const simple = item.every((l, n) => n === 0 || (l.trim() !== "" && !startsBlock(item, n)));
    const content = simple ? renderInline(item.map((l) => l.trim()).join("\n"), options) : renderBlocks(item, options, state);
    return `<li>${content}</li>`;
  });
  return `<${tag}${startAttribute}>\n${body.join("\n")}\n</${tag}>`;
}

function tableCells(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, "")
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

function renderTable(rows: string[], options: RenderOptions): string {
  const [header = "", , ...body] = rows;
  const head = tableCells(header).map((cell) => `<th>${renderInline(cell, options)}</th>`).join("");
  const lines = body.map((row) => `<tr>${tableCells(row).map((cell) => `<td>${renderInline(cell, options)}</td>`).join("")}</tr>`);
  return `<table>\n<thead><tr>${head}</tr></thead>\n<tbody>\n${lines.join("\n")}\n</tbody>\n</table>`;
}

/**
 * Inline markup. Code spans are cut out first (nothing inside them is markup), then links and images, then
 * emphasis; every piece of text is escaped on its way out.
 */
export function renderInline(text: string, options: RenderOptions): string {
  const pieces = text.split(/(`+[^`]*?`+)/);
  return pieces
    .map((piece, n) => (n % 2 === 1 ? `<code>${escapeHtml(piece.replace(/^`+\s?|\s?`+$/g, ""))}</code>` : renderLinks(piece, options)))
    .join("");
}

const LINK = /(!?)\[((?:[^\]`]|`[^`]*`)*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g;

function renderLinks(text: string, options: RenderOptions): string {
  let out = "";
  let last = 0;
  for (const m of text.matchAll(LINK)) {
    out += renderEmphasis(text.slice(last, m.index));
    last = m.index + m[0].length;
    const [, bang, label = "", href = ""] = m;
    const target = options.linkTarget(href);
    if (bang) {
      out += target ? `<img src="${escapeHtml(target)}" alt="${escapeHtml(label)}">` : escapeHtml(label);
      continue;
    }
    const inner = renderInline(label, options);
    out += target ? `<a href="${escapeHtml(target)}">${inner}</a>` : `<span title="${escapeHtml(href)}">${inner}</span>`;
  }
  return out + renderEmphasis(text.slice(last));
}

function renderEmphasis(text: string): string {
  return escapeHtml(text)
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, "<strong>$1</strong>")
    .replace(/(^|[^\w*])\*(?=\S)([^*]*?\S)\*(?!\w)/g, "$1<em>$2</em>");
}
