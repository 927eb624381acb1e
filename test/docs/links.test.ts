/**
 * The documentation stands alone: every relative link of README.md, docs/*.md and the packages' READMEs names a
 * file of the repository (and, with `#anchor`, one of its headings), and no doc points outside the repository.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import test from "ava";
import { headingAnchors, markdownLinks } from "./markdown.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** README.md, every markdown file of docs/, and the README of every package folder. */
function documents(): string[] {
  const docs = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => join("docs", name));
  const packageFolders = ["contracts", "shared", "console", "provisioner", "deploy", "cli", ...readdirSync(join(root, "services")).map((s) => join("services", s))];
  const readmes = packageFolders.map((folder) => join(folder, "README.md")).filter((path) => existsSync(join(root, path)));
  return ["README.md", ...docs, ...readmes];
}

/** Files outside the repository (the reference material beside it) that docs must not point at, linked or not. */
const OUTSIDE = [
  /\bshared\/(fixtures|spec|reference)\b/,
  /\/work\/shared\b/,
  /\bDESIGN\.md\b/,
  /\bSTYLE\.md\b/,
  /cluster-provisioning-spec/,
  /\bcoopr-(algorithms|rest|provisioner)\.md\b/,
  /\bstack-recipe\.md\b/,
];

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

function linkProblems(path: string): string[] {
  const text = readFileSync(join(root, path), "utf8");
  const problems: string[] = [];
  for (const { target, line } of markdownLinks(text)) {
    const where = `${path}:${line}: ${target}`;
    if (isExternal(target)) {
      if (!/^https?:\/\//.test(target)) problems.push(`${where}: not a relative or web link`);
      continue;
    }
    if (target.startsWith("/")) {
      problems.push(`${where}: an absolute path; link relative to the file`);
      continue;
    }
    const [file = "", anchor] = target.split("#");
    const resolved = file === "" ? join(root, path) : resolve(dirname(join(root, path)), decodeURIComponent(file));
    if (relative(root, resolved).startsWith("..") || !resolved.startsWith(root + sep) && resolved !== root) {
      problems.push(`${where}: outside the repository`);
      continue;
    }
    if (!existsSync(resolved)) {
      problems.push(`${where}: no such file`);
      continue;
    }
    if (anchor !== undefined && resolved.endsWith(".md") && statSync(resolved).isFile()) {
      const anchors = headingAnchors(readFileSync(resolved, "utf8"));
      if (!anchors.has(anchor)) problems.push(`${where}: no heading with anchor #${anchor} in ${relative(root, resolved)}`);
    }
  }
  text.split("\n").forEach((lineText, i) => {
    for (const pattern of OUTSIDE) if (pattern.test(lineText)) problems.push(`${path}:${i + 1}: names ${pattern.source}, a file outside the repository`);
  });
  return problems;
}

test("docs - every relative link resolves to a file (and heading) of the repository, and nothing points outside it", (t) => {
  const docs = documents();
  t.true(docs.includes("docs/api.md") && docs.includes("README.md"), `the documents: ${docs.join(", ")}`);
  t.deepEqual(docs.flatMap(linkProblems), []);
});

test("docs - docs/README.md, the index /docs shows, links every guide of docs/", (t) => {
  const linked = new Set(markdownLinks(readFileSync(join(root, "docs", "README.md"), "utf8")).map((l) => l.target.split("#")[0]));
  const guides = readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md") && name !== "README.md");
  t.deepEqual(guides.filter((name) => !linked.has(name)), [], "guides missing from docs/README.md");
});

test("docs - the README is the short front door", (t) => {
  const lines = readFileSync(join(root, "README.md"), "utf8").split("\n").length;
  t.true(lines <= 250, `README.md has ${lines} lines`);
});
