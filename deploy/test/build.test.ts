/**
 * The compiled build (deploy/src/build.ts, deploy/bin/build-check.mjs, deploy/src/compiled.ts): where it writes,
 * when it counts as stale, and that every workspace export loads as plain JavaScript under the corral-compiled
 * condition.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import test from "ava";
import { repoRoot } from "@corral/deploy";
import { buildProblem, STAMP_PATH } from "../bin/build-check.mjs";
import { buildCompiled } from "../src/build.js";
import { COMPILED_CONDITION, compiledEntryOf, compiledPathOf, nodeArgsOf } from "../src/compiled.js";

const exec = promisify(execFile);

/** A repository of one workspace `a` (and a `cli` the build leaves alone), with the real compiler options. */
async function tinyRepository(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "corral-build-"));
  const tsconfig = JSON.parse(await readFile(join(repoRoot, "tsconfig.json"), "utf8")) as { compilerOptions: object };
  const files: Record<string, string> = {
    "package.json": JSON.stringify({ name: "tiny", type: "module", workspaces: ["a", "cli"] }),
    "tsconfig.json": JSON.stringify({ compilerOptions: tsconfig.compilerOptions }),
    "a/package.json": JSON.stringify({ name: "a", type: "module" }),
    "a/src/index.ts": 'import { twice } from "./math/twice.js";\nexport const answer: number = twice(21);\n',
    "a/src/math/twice.ts": "export const twice = (n: number): number => n * 2;\n",
    "a/src/page/init.js": "console.log('an asset');\n",
  };
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(root, path, ".."), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

/** Sets a file's modification time to now, as an edit would: after the last build started. */
const touch = (path: string) => utimes(path, new Date(), new Date());

test("compiled - a source path maps into dist/ at the same depth, src/ dropped; entries run with the condition", (t) => {
  t.is(compiledPathOf("src/index.ts"), "dist/index.js");
  t.is(compiledPathOf("./src/readers/index.ts"), "./dist/readers/index.js");
  t.is(compiledPathOf("./build.ts"), "./dist/build.js");
  t.throws(() => compiledPathOf("./src/types.d.ts"));
  t.is(compiledEntryOf("services/gateway/src/index.ts"), "services/gateway/dist/index.js");
  t.is(compiledEntryOf("deploy/src/commands/bus-setup.ts"), "deploy/dist/commands/bus-setup.js");
  t.deepEqual(nodeArgsOf("provisioner/src/index.ts", "compiled"), [
    `--conditions=${COMPILED_CONDITION}`,
    "--expose-gc",
    "--import=./deploy/dist/preload-idle-gc.js",
    "provisioner/dist/index.js",
  ]);
  t.deepEqual(nodeArgsOf("provisioner/src/index.ts", "tsx"), ["--import=tsx", "provisioner/src/index.ts"]);
});

test("build - each workspace's src/ compiles into its dist/, other files are copied, and a fresh build is not redone", async (t) => {
  const root = await tinyRepository();
  try {
    t.is(buildProblem(root), "there is no compiled build yet");
    const first = await buildCompiled({ root });
    t.like(first, { built: true, files: 2, reason: "there is no compiled build yet" });
    const index = await readFile(join(root, "a/dist/index.js"), "utf8");
    t.regex(index, /from "\.\/math\/twice\.js"/);
    t.notRegex(index, /: number/, "types are gone");
    t.is(await readFile(join(root, "a/dist/page/init.js"), "utf8"), "console.log('an asset');\n");
    const map = JSON.parse(await readFile(join(root, "a/dist/math/twice.js.map"), "utf8")) as { sources: string[] };
    t.deepEqual(map.sources, ["../../src/math/twice.ts"], "the source map points at the source from where it lies");
    const { stdout } = await exec(process.execPath, ["--input-type=module", "-e", `console.log((await import("${join(root, "a/dist/index.js")}")).answer)`]);
    t.is(stdout.trim(), "42");
    const stamp = JSON.parse(await readFile(join(root, STAMP_PATH), "utf8")) as { outputs: string[]; inputs: string[] };
    t.deepEqual(stamp.outputs, ["a/dist"]);
    t.deepEqual(stamp.inputs, ["package.json", "tsconfig.json", "a/src", "a/package.json"]);
    t.is(buildProblem(root), undefined);
    t.like(await buildCompiled({ root }), { built: false });
    t.like(await buildCompiled({ root, force: true }), { built: true, reason: "asked to" });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test("build - a changed or added source, a missing output or another commit makes the build stale", async (t) => {
  const root = await tinyRepository();
  try {
    await mkdir(join(root, ".git/refs/heads"), { recursive: true });
    await writeFile(join(root, ".git/HEAD"), "ref: refs/heads/main\n");
    await writeFile(join(root, ".git/refs/heads/main"), `${"a".repeat(40)}\n`);
    await buildCompiled({ root });
    t.is(buildProblem(root), undefined);

    await touch(join(root, "a/src/math/twice.ts"));
    t.is(buildProblem(root), "a/src/math/twice.ts changed after it was built");
    await buildCompiled({ root });
    t.is(buildProblem(root), undefined, "built again");

    await writeFile(join(root, "a/src/math/half.ts"), "export const half = (n: number): number => n / 2;\n");
    t.regex(buildProblem(root) ?? "", /^a\/src\/math(\/half\.ts)? changed after it was built$/);
    await buildCompiled({ root });
    t.truthy(await readFile(join(root, "a/dist/math/half.js"), "utf8"));

    await writeFile(join(root, ".git/refs/heads/main"), `${"b".repeat(40)}\n`);
    t.is(buildProblem(root), `it was built at commit ${"a".repeat(12)}, the checkout is at ${"b".repeat(12)}`);
    await buildCompiled({ root });
    t.is(buildProblem(root), undefined);

    await rm(join(root, "a/dist"), { recursive: true });
    t.is(buildProblem(root), "a/dist is missing");
    // As a systemd unit runs it before its process: the checkout it lies in, exit 1 and the reason on stderr.
    await mkdir(join(root, "deploy/bin"), { recursive: true });
    await writeFile(join(root, "deploy/bin/build-check.mjs"), await readFile(join(repoRoot, "deploy/bin/build-check.mjs")));
    const check = await exec(process.execPath, [join(root, "deploy/bin/build-check.mjs")]).then(
      () => ({ code: 0, stderr: "" }),
      (err: { code: number; stderr: string }) => err,
    );
    t.is(check.code, 1);
    t.regex(check.stderr, /the compiled JavaScript in .* is not usable: a\/dist is missing; run `npm run build` there/);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test("build - every workspace export names its compiled file under the corral-compiled condition", async (t) => {
  const manifest = JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")) as { workspaces: string[] };
  for (const dir of manifest.workspaces.filter((w) => w !== "cli")) {
    const { exports } = JSON.parse(await readFile(join(repoRoot, dir, "package.json"), "utf8")) as { exports: Record<string, unknown> };
    for (const [subpath, target] of Object.entries(exports)) {
      const source = (target as { default?: unknown }).default;
      t.is(typeof source, "string", `${dir} ${subpath}: { "${COMPILED_CONDITION}": "./dist/...", "default": "./src/..." }`);
      t.deepEqual(target, { [COMPILED_CONDITION]: compiledPathOf(source as string), default: source }, `${dir} ${subpath}`);
    }
  }
});

test("build - every workspace export loads as plain JavaScript with the corral-compiled condition", async (t) => {
  await buildCompiled();
  t.is(buildProblem(repoRoot), undefined);
  const manifest = JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")) as { workspaces: string[] };
  const specifiers: string[] = [];
  for (const dir of manifest.workspaces.filter((w) => w !== "cli")) {
    const pkg = JSON.parse(await readFile(join(repoRoot, dir, "package.json"), "utf8")) as { name: string; exports: Record<string, unknown> };
    for (const subpath of Object.keys(pkg.exports)) specifiers.push(subpath === "." ? pkg.name : `${pkg.name}${subpath.slice(1)}`);
  }
  t.true(specifiers.includes("@corral/provider-ec2") && specifiers.includes("@corral/provider-lxd"), "the provisioner's default plugin modules");
  // Plain node cannot load a .ts file: one resolved to a source would fail here.
  const script = `for (const s of ${JSON.stringify(specifiers)}) { const url = import.meta.resolve(s); if (!url.endsWith(".js")) throw new Error(s + " -> " + url); await import(s); } console.log("ok");`;
  const { stdout } = await exec(process.execPath, [`--conditions=${COMPILED_CONDITION}`, "--input-type=module", "-e", script], { cwd: repoRoot });
  t.is(stdout.trim(), "ok");
});
