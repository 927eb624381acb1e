/**
 * The project's guides (the markdown files of the repository's docs/ folder), served read-only at `/docs`: an
 * index page, each guide as an HTML page (`/docs/operations`) and as its markdown source (`/docs/operations.md`),
 * the images they show (`/docs/console-clusters.png`), and `/docs/index.json` listing the guides for the console's
 * Help page. Everything is read and rendered once, when the gateway starts; a request is answered from memory by
 * exact name, so no path reaches any other file. Without a docs/ folder every path answers 404.
 */
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { escapeHtml, renderMarkdown } from "./markdown.js";

/** The repository's docs/ folder, beside the services: the guides ship with the repository. */
export const REPOSITORY_DOCS = fileURLToPath(new URL("../../../../docs/", import.meta.url));

/** Where the guides are served, outside the versioned API. */
export const GUIDES_PATH = "/docs";
/** The page of the API's own reference (Swagger UI), linked from every guide. */
const API_REFERENCE_PATH = "/v2/docs";

export interface GuideAnswer {
  status: number;
  body: Buffer;
  headers: Record<string, string>;
}

export interface GuideSummary {
  /** The file name without `.md`: the guide's page is `/docs/<name>`. */
  name: string;
  /** Its first heading. */
  title: string;
  /** The HTML page. */
  path: string;
  /** The markdown source. */
  source: string;
}

export interface Guides {
  /** The answer to a `GET` or `HEAD` of `path`, or undefined when the path is not under `/docs`. */
  answer(path: string): GuideAnswer | undefined;
  /** The guides found at start, in name order (the index page first). */
  readonly list: readonly GuideSummary[];
}

const GUIDE_FILE = /^[A-Za-z0-9][A-Za-z0-9_-]*\.md$/;
const IMAGE_FILE = /^[A-Za-z0-9][A-Za-z0-9._-]*\.png$/;
/** The guide the index page shows: the map of the guides. */
const INDEX_GUIDE = "README";

const STYLE = `
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; color: #1f2328; }
nav { padding: 0.6rem 1rem; border-bottom: 1px solid #d0d7de; background: #f6f8fa; }
nav a { margin-right: 1rem; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem; }
code, pre { font: 0.9em/1.4 ui-monospace, monospace; background: #f6f8fa; }
pre { padding: 0.8rem; overflow-x: auto; }
table { border-collapse: collapse; display: block; overflow-x: auto; }
th, td { border: 1px solid #d0d7de; padding: 0.3rem 0.6rem; vertical-align: top; text-align: left; }
img { max-width: 100%; }
`;
/** Only this page's own style sheet and images of this gateway; no script at all. */
const PAGE_POLICY = `default-src 'none'; img-src 'self'; style-src 'sha256-${createHash("sha256").update(STYLE).digest("base64")}'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`;

const HTML = "text/html; charset=utf-8";
const MARKDOWN = "text/markdown; charset=utf-8";
const JSON_TYPE = "application/json";

/** Reads and renders every guide of `docsDir` (none when the folder is missing). */
export async function openGuides(docsDir: string): Promise<Guides> {
  const entries = await readdir(docsDir, { withFileTypes: true }).catch(() => []);
  const names = entries.filter((e) => e.isFile()).map((e) => e.name);
  const guideFiles = names.filter((n) => GUIDE_FILE.test(n)).sort();
  const imageFiles = new Set(names.filter((n) => IMAGE_FILE.test(n)));
  const guideNames = new Set(guideFiles.map((f) => f.slice(0, -".md".length)));

  /** A guide's page, or its image, on this gateway; undefined for anything else of the repository. */
  const linkTarget = (href: string): string | undefined => {
    if (/^https?:\/\//i.test(href)) return href;
    if (href.startsWith("#")) return href;
    const [file = "", anchor] = href.split("#");
    const hash = anchor === undefined ? "" : `#${anchor}`;
    if (imageFiles.has(file)) return `${GUIDES_PATH}/${file}`;
    const name = file.endsWith(".md") ? file.slice(0, -".md".length) : undefined;
    if (name === undefined || !guideNames.has(name)) return undefined;
    return name === INDEX_GUIDE ? `${GUIDES_PATH}${hash}` : `${GUIDES_PATH}/${name}${hash}`;
  };

  const answers = new Map<string, GuideAnswer>();
  const list: GuideSummary[] = [];
  for (const file of guideFiles) {
    const name = file.slice(0, -".md".length);
    const source = await readFile(join(docsDir, file));
    const rendered = renderMarkdown(source.toString("utf8"), { linkTarget });
    const title = rendered.title || name;
    const page = `${GUIDES_PATH}/${name}`;
    list.push({ name, title, path: name === INDEX_GUIDE ? GUIDES_PATH : page, source: `${page}.md` });
    answers.set(page, htmlAnswer(title, rendered.html, `${page}.md`));
    answers.set(`${page}.md`, { status: 200, body: source, headers: { "content-type": MARKDOWN, "x-content-type-options": "nosniff", "cache-control": "no-cache" } });
  }
  for (const file of imageFiles) {
    const body = await readFile(join(docsDir, file));
    answers.set(`${GUIDES_PATH}/${file}`, { status: 200, body, headers: { "content-type": "image/png", "x-content-type-options": "nosniff", "cache-control": "max-age=3600" } });
  }
  list.sort((a, b) => (a.name === INDEX_GUIDE ? -1 : b.name === INDEX_GUIDE ? 1 : a.name < b.name ? -1 : 1));
  const index = answers.get(`${GUIDES_PATH}/${INDEX_GUIDE}`) ?? (list.length > 0 ? generatedIndex(list) : undefined);
  if (index) answers.set(GUIDES_PATH, index);
  if (list.length > 0) {
    const summary = { guides: list, apiReference: API_REFERENCE_PATH };
    answers.set(`${GUIDES_PATH}/index.json`, { status: 200, body: Buffer.from(JSON.stringify(summary)), headers: { "content-type": JSON_TYPE, "cache-control": "no-cache" } });
  }

  const missing = (path: string): GuideAnswer => {
    const message =
      list.length === 0
        ? "the guides are not installed: this installation has no docs/ folder"
        : `no guide at ${path.slice(0, 120)}; the guides are ${list.map((g) => g.path).join(", ")}`;
    return { status: 404, body: Buffer.from(JSON.stringify({ status: 404, error: "not_found", message })), headers: { "content-type": JSON_TYPE } };
  };

  return {
    list,
    answer(path) {
      if (path !== GUIDES_PATH && !path.startsWith(`${GUIDES_PATH}/`)) return undefined;
      const key = path.length > GUIDES_PATH.length && path.endsWith("/") ? path.slice(0, -1) : path;
      return answers.get(key) ?? missing(path);
    },
  };
}

/** A page of the guides: `html` inside the navigation every page has (with a link to its markdown, when given). */
function htmlAnswer(title: string, html: string, sourcePath?: string): GuideAnswer {
  const source = sourcePath ? `<a href="${escapeHtml(sourcePath)}">Markdown</a>` : "";
  const page = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Corral</title>
<style>${STYLE}</style>
</head>
<body>
<nav aria-label="Guides"><a href="${GUIDES_PATH}">Guides</a><a href="${API_REFERENCE_PATH}">API reference</a><a href="/">Console</a>${source}</nav>
<main>
${html}
</main>
</body>
</html>
`;
  return {
    status: 200,
    body: Buffer.from(page),
    headers: { "content-type": HTML, "content-security-policy": PAGE_POLICY, "x-content-type-options": "nosniff", "cache-control": "no-cache" },
  };
}

/** The index when docs/ has no README.md: every guide by its title. */
function generatedIndex(list: readonly GuideSummary[]): GuideAnswer {
  const items = list.map((g) => `<li><a href="${escapeHtml(g.path)}">${escapeHtml(g.title)}</a></li>`).join("\n");
  return htmlAnswer("Corral's guides", `<h1>Corral's guides</h1>\n<ul>\n${items}\n</ul>`);
}
