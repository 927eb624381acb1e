/**
 * The guides at `/docs` (src/guides): the markdown renderer escapes everything and keeps GitHub's anchors; the
 * guides are answered by exact name only, links between them point at their pages, and an installation without
 * docs/ answers 404 with a JSON error. The repository's own docs/ renders too.
 */
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { openGuides, REPOSITORY_DOCS } from "../src/guides/guides.js";
import { headingSlug, renderMarkdown } from "../src/guides/markdown.js";

const noLinks = { linkTarget: () => undefined };
const sameLinks = { linkTarget: (href: string) => href };

test("markdown - headings get GitHub's anchors, repeats numbered; the first is the title", (t) => {
  const { html, title } = renderMarkdown("# The `corral` command\n\n## Settings\n\n## Settings\n\n### Files of deleted tenants (`src/x.ts`)\n", noLinks);
  t.is(title, "The corral command");
  t.regex(html, /<h1 id="the-corral-command">The <code>corral<\/code> command<\/h1>/);
  t.regex(html, /<h2 id="settings">Settings<\/h2>\n<h2 id="settings-1">Settings<\/h2>/);
  t.regex(html, /<h3 id="files-of-deleted-tenants-srcxts">/);
  t.is(headingSlug("HTTP edge cases and a front proxy"), "http-edge-cases-and-a-front-proxy");
  t.is(headingSlug("Provider `hostpool`: machines that already exist"), "provider-hostpool-machines-that-already-exist");
});

test("markdown - the source's HTML is text: no tag, attribute or script of its own reaches the page", (t) => {
  const source = [
    "<script>alert(1)</script> and <img src=x onerror=alert(1)>",
    "",
    "[click](javascript:alert(1)) `<b>` **<i>bold</i>**",
    "",
    '| a | b |\n|---|---|\n| <svg onload=x> | "q" |',
    "",
    "```html\n<script>x</script>\n```",
  ].join("\n");
  const { html } = renderMarkdown(source, noLinks);
  t.false(/<(script|img|svg|i)\b/.test(html), html);
  t.false(/<[a-z][^>]*\son\w+=/i.test(html), "no event handler attribute inside a tag");
  t.false(html.includes('href="javascript'), "a link the target function refuses is no link");
  t.regex(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  t.regex(html, /<code>&lt;b&gt;<\/code>/);
  t.regex(html, /<strong>&lt;i&gt;bold&lt;\/i&gt;<\/strong>/);
  t.regex(html, /<pre><code class="language-html">&lt;script&gt;x&lt;\/script&gt;<\/code><\/pre>/);
});

test("markdown - tables, lists with nested code, paragraphs, links and images", (t) => {
  const source = [
    "Intro with [a link](api.md#dry-run) and ![shot](x.png).",
    "",
    "| command | what |",
    "|---|---|",
    "| `a \\| b` | one |",
    "",
    "1. First step:",
    "",
    "   ```bash",
    "   npm start",
    "   ```",
    "",
    "2. Second step,",
    "   continued.",
    "",
    "- one",
    "- two",
    "",
    "After.",
  ].join("\n");
  const { html } = renderMarkdown(source, sameLinks);
  t.regex(html, /<p>Intro with <a href="api.md#dry-run">a link<\/a> and <img src="x.png" alt="shot">.<\/p>/);
  t.regex(html, /<thead><tr><th>command<\/th><th>what<\/th><\/tr><\/thead>/);
  t.regex(html, /<td><code>a \| b<\/code><\/td><td>one<\/td>/);
  t.regex(html, /<ol>\n<li><p>First step:<\/p>\n<pre><code class="language-bash">npm start<\/code><\/pre><\/li>\n<li>Second step,\ncontinued.<\/li>\n<\/ol>/);
  t.regex(html, /<ul>\n<li>one<\/li>\n<li>two<\/li>\n<\/ul>\n<p>After.<\/p>/);
});

async function docsFolder(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "corral-guides-"));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

const text = (answer: { body: Buffer } | undefined) => answer?.body.toString("utf8") ?? "";

test("guides - pages, sources, images and the index by exact name; links between guides point at their pages", async (t) => {
  const dir = await docsFolder({
    "README.md": "# Guides\n\n- [API](api.md)\n- [the front door](../README.md)\n",
    "api.md": "# The API\n\nSee [the index](README.md) and [ops](ops.md#redis), ![shot](shot.png), [code](../services/x.ts).\n",
    "shot.png": "PNG",
    "notes.txt": "not a guide",
  });
  await mkdir(join(dir, "sub.md"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const guides = await openGuides(dir);

  t.deepEqual(guides.list.map((g) => [g.name, g.title, g.path, g.source]), [
    ["README", "Guides", "/docs", "/docs/README.md"],
    ["api", "The API", "/docs/api", "/docs/api.md"],
  ]);
  const page = guides.answer("/docs/api")!;
  t.is(page.status, 200);
  t.is(page.headers["content-type"], "text/html; charset=utf-8");
  t.regex(page.headers["content-security-policy"] ?? "", /^default-src 'none'; img-src 'self'; style-src 'sha256-/);
  t.regex(text(page), /<a href="\/docs">the index<\/a>/);
  t.regex(text(page), /<span title="ops.md#redis">ops<\/span>/, "a guide that does not exist is no link");
  t.regex(text(page), /<img src="\/docs\/shot.png" alt="shot">/);
  t.regex(text(page), /<span title="..\/services\/x.ts">code<\/span>/, "a file outside docs/ is no link");
  t.false(/<script/.test(text(page)), "no script on a guide's page");

  t.regex(text(guides.answer("/docs")), /<h1 id="guides">Guides<\/h1>/, "the index is docs/README.md");
  t.is(text(guides.answer("/docs/")), text(guides.answer("/docs")));
  t.is(text(guides.answer("/docs/api.md")), "# The API\n\nSee [the index](README.md) and [ops](ops.md#redis), ![shot](shot.png), [code](../services/x.ts).\n");
  t.is(guides.answer("/docs/api.md")!.headers["content-type"], "text/markdown; charset=utf-8");
  t.is(guides.answer("/docs/shot.png")!.headers["content-type"], "image/png");
  t.deepEqual(JSON.parse(text(guides.answer("/docs/index.json"))), { guides: guides.list, apiReference: "/v2/docs" });

  for (const path of ["/docs/notes.txt", "/docs/sub.md", "/docs/../package.json", "/docs/%2e%2e/package.json", "/docs/api/x", "/docs/API", "/docs//api"]) {
    const missing = guides.answer(path)!;
    t.is(missing.status, 404, path);
    t.like(JSON.parse(text(missing)), { status: 404, error: "not_found" }, path);
  }
  t.is(guides.answer("/v2/docs"), undefined, "the API's own docs are not the guides'");
  t.is(guides.answer("/documents"), undefined);
});

test("guides - without a docs/ folder every guide path is a JSON 404", async (t) => {
  const guides = await openGuides(join(tmpdir(), "corral-no-such-docs-folder"));
  t.deepEqual(guides.list, []);
  for (const path of ["/docs", "/docs/index.json", "/docs/api"]) {
    const answer = guides.answer(path)!;
    t.is(answer.status, 404, path);
    t.deepEqual(JSON.parse(text(answer)), { status: 404, error: "not_found", message: "the guides are not installed: this installation has no docs/ folder" });
  }
});

test("guides - the repository's docs render, and every link between them points at a served page", async (t) => {
  const guides = await openGuides(REPOSITORY_DOCS);
  const names = guides.list.map((g) => g.name);
  for (const name of ["README", "api", "operations", "providers"]) t.true(names.includes(name), name);
  const served = new Set(guides.list.flatMap((g) => [g.path, `/docs/${g.name}`]));
  for (const guide of guides.list) {
    const html = text(guides.answer(guide.path));
    for (const [, href] of html.matchAll(/href="([^"]+)"/g)) {
      if (href!.startsWith("http") || href!.startsWith("#") || href === "/" || href === "/v2/docs" || href!.endsWith(".md")) continue;
      t.true(served.has(href!.split("#")[0]!), `${guide.name}: ${href}`);
    }
  }
});
