/**
 * The compiled build: every workspace the services and provisioners load, emitted by the TypeScript compiler into
 * its `dist/` (compiled.ts says where), with the repository's compiler options. Types are not checked here
 * (`noCheck`): `npm run typecheck` and CI do that; this only turns checked sources into JavaScript, in seconds.
 * The outputs are written beside the checkout first and then put in place, under a lock, so two starts at once
 * build once; the stamp (deploy/bin/build-check.mjs) is written last.
 */
import { copyFile, mkdir, readdir, readFile, rm, rename, writeFile } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { buildProblem, currentCommit, STAMP_PATH, type BuildStamp } from "../bin/build-check.mjs";
import { compiledPathOf } from "./compiled.js";
import { withDirLock } from "./dir-lock.js";
import { repoRoot } from "./paths.js";

/** Workspaces that only clients use, never a service or provisioner: not compiled. */
const NOT_COMPILED = new Set(["cli"]);
/** Console's sources are the browser's, bundled when the gateway starts; only its build.ts runs in node. */
const CONSOLE = "console";

/** What {@link buildCompiled} did. */
export interface BuildResult {
  /** False when the build was fresh already (and `force` was not given). */
  built: boolean;
  /** Why it built (build-check.mjs's words), when it did. */
  reason?: string;
  /** Compiled files written. */
  files: number;
  ms: number;
}

/** Options for {@link buildCompiled}. */
export interface BuildOptions {
  /** @default the repository this module is in */
  root?: string;
  /** Build even when the outputs are fresh. @default false */
  force?: boolean;
  log?: (line: string) => void;
}

/** One workspace to compile: its directory and its TypeScript sources, both relative to the root. */
interface CompiledWorkspace {
  dir: string;
  sources: string[];
  /** What a change of needs another build: its sources (directories or files) and package.json. */
  inputs: string[];
}

/** Compiles every workspace into its dist/ when the outputs are missing or older than the sources (or `force`). */
export async function buildCompiled(opts: BuildOptions = {}): Promise<BuildResult> {
  const root = opts.root ?? repoRoot;
  const log = opts.log ?? (() => {});
  const started = Date.now();
  return withDirLock(join(root, ".corral", "build.lock"), async () => {
    // Checked under the lock: a start that waited for another's build finds it done.
    const reason = opts.force ? "asked to" : buildProblem(root);
    if (reason === undefined) return { built: false, files: 0, ms: Date.now() - started };
    const workspaces = await compiledWorkspaces(root);
    const staging = join(root, ".corral", `build-${process.pid}`);
    await rm(staging, { recursive: true, force: true });
    try {
      const files = await emit(root, workspaces, staging);
      await copyAssets(root, workspaces, staging);
      await rm(join(root, STAMP_PATH), { force: true });
      for (const ws of workspaces) {
        await rm(join(root, ws.dir, "dist"), { recursive: true, force: true });
        await rename(join(staging, ws.dir, "dist"), join(root, ws.dir, "dist"));
      }
      const stamp: BuildStamp = {
        commit: currentCommit(root),
        startedAt: started,
        inputs: ["package.json", "tsconfig.json", ...workspaces.flatMap((ws) => ws.inputs)],
        outputs: workspaces.map((ws) => join(ws.dir, "dist")),
      };
      await mkdir(dirname(join(root, STAMP_PATH)), { recursive: true });
      await writeFile(join(root, STAMP_PATH), `${JSON.stringify(stamp, null, 2)}\n`);
      const ms = Date.now() - started;
      log(`compiled ${files} files of ${workspaces.length} workspaces in ${(ms / 1000).toFixed(1)} s (${reason})`);
      return { built: true, reason, files, ms };
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  });
}

/** The root package.json's workspaces that run in a service or provisioner, with their sources. */
async function compiledWorkspaces(root: string): Promise<CompiledWorkspace[]> {
  const manifest = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { workspaces?: string[] };
  const found: CompiledWorkspace[] = [];
  for (const dir of manifest.workspaces ?? []) {
    if (NOT_COMPILED.has(dir)) continue;
    const sourceDir = dir === CONSOLE ? undefined : join(dir, "src");
    const sources = sourceDir ? (await filesUnder(root, sourceDir)).filter(isSource) : [join(dir, "build.ts")];
    found.push({ dir, sources, inputs: [...(sourceDir ? [sourceDir] : sources), join(dir, "package.json")] });
  }
  return found;
}

const isSource = (path: string) => path.endsWith(".ts") && !path.endsWith(".d.ts");

/** Every file under `dir` (relative to `root`), as paths relative to `root`. */
async function filesUnder(root: string, dir: string): Promise<string[]> {
  const entries = await readdir(join(root, dir), { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(root, join(e.parentPath, e.name)));
}

/** Emits every workspace's sources into `staging/<workspace>/dist/`; answers how many files were written. */
async function emit(root: string, workspaces: CompiledWorkspace[], staging: string): Promise<number> {
  const ts = (await import("typescript")).default;
  const config = ts.readConfigFile(join(root, "tsconfig.json"), ts.sys.readFile);
  if (config.error) throw new Error(`tsconfig.json: ${ts.flattenDiagnosticMessageText(config.error.messageText, "\n")}`);
  const { options, errors } = ts.convertCompilerOptionsFromJson((config.config as { compilerOptions?: unknown }).compilerOptions, root);
  if (errors.length > 0) throw new Error(`tsconfig.json: ${errors.map((e) => ts.flattenDiagnosticMessageText(e.messageText, "\n")).join("; ")}`);
  // tsc lays the outputs out under outDir like the sources under rootDir; writeFile moves each into its dist/.
  const outDir = join(staging, "emitted");
  const program = ts.createProgram({
    rootNames: workspaces.flatMap((ws) => ws.sources.map((source) => join(root, source))),
    // Nothing but the sources is needed to emit them: no lib files, no type packages, no module resolution.
    options: { ...options, noEmit: false, noCheck: true, noLib: true, types: [], noResolve: true, rootDir: root, outDir, declaration: false, sourceMap: true, incremental: false },
  });
  const syntax = program.getSyntacticDiagnostics();
  if (syntax.length > 0) throw new Error(`cannot compile:\n${ts.formatDiagnostics(syntax, formatHost(ts, root))}`);
  const byDir = [...workspaces].sort((a, b) => b.dir.length - a.dir.length);
  const writes: Array<Promise<void>> = [];
  let files = 0;
  const result = program.emit(undefined, (fileName, text, _bom, _onError, sourceFiles) => {
    const source = sourceFiles?.[0]?.fileName;
    if (!source) throw new Error(`the compiler wrote ${fileName} for no source file`);
    const isMap = fileName.endsWith(".map");
    const inRoot = compiledTarget(root, byDir, source) + (isMap ? ".map" : "");
    const staged = join(staging, inRoot);
    const content = isMap ? relocatedSourceMap(text, join(root, inRoot), source) : text;
    files += isMap ? 0 : 1;
    writes.push(mkdir(dirname(staged), { recursive: true }).then(() => writeFile(staged, content)));
  });
  await Promise.all(writes);
  const failed = result.diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (result.emitSkipped || failed.length > 0) throw new Error(`cannot compile:\n${ts.formatDiagnostics(failed, formatHost(ts, root))}`);
  return files;
}

type Ts = typeof import("typescript");

function formatHost(ts: Ts, root: string): import("typescript").FormatDiagnosticsHost {
  return { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => ts.sys.newLine };
}

/** Where the JavaScript of `source` (absolute) goes, relative to the root: `<workspace>/dist/...` (compiledPathOf). */
function compiledTarget(root: string, workspaces: CompiledWorkspace[], source: string): string {
  const path = relative(root, source).split(sep).join("/");
  const ws = workspaces.find((w) => path.startsWith(`${w.dir}/`));
  if (!ws) throw new Error(`${path} is imported by the compiled sources but is in no compiled workspace`);
  return join(ws.dir, compiledPathOf(path.slice(ws.dir.length + 1)));
}

/** A source map whose `sources` point from `mapPath`, where it ends up, at `source` (tsc's point from its outDir). */
function relocatedSourceMap(text: string, mapPath: string, source: string): string {
  const map = JSON.parse(text) as { sources: string[]; sourceRoot?: string };
  map.sourceRoot = "";
  map.sources = [relative(dirname(mapPath), source).split(sep).join("/")];
  return JSON.stringify(map);
}

/** Files in a workspace's src/ that are not TypeScript (the gateway's docs-page script): copied beside the output. */
async function copyAssets(root: string, workspaces: CompiledWorkspace[], staging: string): Promise<void> {
  for (const ws of workspaces) {
    if (ws.dir === CONSOLE) continue;
    for (const file of await filesUnder(root, join(ws.dir, "src"))) {
      if (file.endsWith(".ts")) continue;
      const target = join(staging, ws.dir, "dist", relative(join(ws.dir, "src"), file));
      await mkdir(dirname(target), { recursive: true });
      await copyFile(join(root, file), target);
    }
  }
}
