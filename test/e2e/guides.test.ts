/**
 * The guides at `/docs` on a running Corral with security on: the index, each guide's page and markdown source, the
 * images and the console's list need no identity nor token (like the API description); only files of docs/ are
 * answered, by exact name, whatever the path tries; every other method still needs a token.
 */
import { request } from "node:http";
import { readdirSync, readFileSync } from "node:fs";
import { SUPERADMIN } from "../helpers/api.js";
import { testWithSystem } from "../helpers/system-test.js";

const test = testWithSystem({ security: { authService: false } });

const docs = new URL("../../docs/", import.meta.url);
const guideNames = readdirSync(docs).filter((f) => f.endsWith(".md")).map((f) => f.slice(0, -".md".length));

/** A request with the path sent exactly as given (fetch would resolve `..` and `%2e%2e` first). */
function rawGet(origin: string, path: string): Promise<{ status: number; type: string; body: string }> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: "GET" }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"] ?? ""), body }));
    });
    req.on("error", reject);
    req.end();
  });
}

test("guides - the index, every guide, its source and the console's list answer without identity or token", async (t) => {
  const origin = new URL(t.context.sys.baseUrl).origin;
  t.true(guideNames.includes("api") && guideNames.includes("README"), "the repository has its guides");

  const index = await fetch(`${origin}/docs`);
  const indexPage = await index.text();
  t.is(index.status, 200);
  t.is(index.headers.get("content-type"), "text/html; charset=utf-8");
  t.regex(index.headers.get("content-security-policy") ?? "", /^default-src 'none'/, "no script, nothing from elsewhere");
  t.regex(indexPage, /<a href="\/docs\/api">api.md<\/a>/, "the index (docs/README.md) links the guides' pages");

  const listed = (await (await fetch(`${origin}/docs/index.json`)).json()) as { guides: Array<{ name: string; path: string }>; apiReference: string };
  t.deepEqual(listed.guides.map((g) => g.name).sort(), [...guideNames].sort(), "index.json lists every markdown file of docs/");
  t.is(listed.apiReference, "/v2/docs");

  for (const name of guideNames) {
    const page = await fetch(`${origin}/docs/${name === "README" ? "" : name}`);
    t.is(page.status, 200, name);
    t.regex(await page.text(), /<h1 id=/, `${name}: rendered with its heading`);
    const source = await fetch(`${origin}/docs/${name}.md`);
    t.is(source.headers.get("content-type"), "text/markdown; charset=utf-8");
    t.is(await source.text(), readFileSync(new URL(`${name}.md`, docs), "utf8"), `${name}.md is the file as it is`);
  }
  const image = await fetch(`${origin}/docs/console-clusters.png`);
  t.is(image.status, 200);
  t.is(image.headers.get("content-type"), "image/png");

  const head = await fetch(`${origin}/docs/operations`, { method: "HEAD" });
  t.is(head.status, 200);
  t.is(await head.text(), "", "HEAD: no body");
});

test("guides - only files of docs/ by exact name: every other path is a JSON 404, nothing outside docs/ is read", async (t) => {
  const origin = new URL(t.context.sys.baseUrl).origin;
  for (const path of [
    "/docs/../package.json",
    "/docs/%2e%2e/package.json",
    "/docs/..%2fpackage.json",
    "/docs/%2fetc%2fpasswd",
    "/docs/api.md/..",
    "/docs/../README.md",
    "/docs/no-such-guide",
    "/docs/architecture.MD",
    "/docs/.env",
  ]) {
    const res = await rawGet(origin, path);
    t.is(res.status, 404, path);
    t.is(res.type, "application/json", path);
    t.like(JSON.parse(res.body), { status: 404, error: "not_found" }, path);
    t.false(res.body.includes('"workspaces"'), `${path}: not package.json`);
  }
});

test("guides - only GET and HEAD are public, and only outside /v2: another method still needs a token", async (t) => {
  const { baseUrl } = t.context.sys;
  const origin = new URL(baseUrl).origin;
  const identity = { "Service-UserID": SUPERADMIN.user!, "Service-TenantID": SUPERADMIN.tenant! };
  for (const [method, url] of [
    ["POST", `${origin}/docs`],
    ["DELETE", `${origin}/docs/api.md`],
    ["GET", `${baseUrl}/docs/api.md`],
  ] as const) {
    const res = await fetch(url, { method, headers: identity });
    await res.text();
    t.is(res.status, method === "GET" ? 404 : 401, `${method} ${url}`);
  }
});
