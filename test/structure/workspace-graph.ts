/**
 * The npm workspaces of the repository as a graph: each workspace's package.json (name, version, declared
 * dependencies) and every import its files make of another workspace, read with the TypeScript preprocessor
 * (static imports, re-exports and `import()` alike; comments and strings are not imports).
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

export const repoRoot = resolve(new URL("../..", import.meta.url).pathname);

export interface Workspace {
  /** Its folder, relative to the repository (`services/clusters`). */
  dir: string;
  name: string;
  version: string;
  /** Declared dependencies (`dependencies` and `devDependencies`): package name -> version range. */
  declared: Record<string, string>;
}

/** One import a file makes of another workspace. */
export interface WorkspaceImport {
  /** The importing file, relative to the repository. */
  file: string;
  /** As written. */
  specifier: string;
  /** The workspace imported; undefined for a `@corral/` name no workspace has. */
  target: Workspace | undefined;
  /** Whether it reaches the other workspace by a relative path instead of its package name. */
  byPath: boolean;
}

const SOURCE = /\.(?:[cm]?ts|tsx|[cm]?js)$/;
const SKIPPED_DIRS = new Set(["node_modules", "dist"]);

interface PackageJson {
  name: string;
  version: string;
  workspaces?: string[];
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const readPackage = (dir: string): PackageJson => JSON.parse(readFileSync(join(repoRoot, dir, "package.json"), "utf8")) as PackageJson;

export function workspaces(): Workspace[] {
  return (readPackage(".").workspaces ?? []).map((dir) => {
    const p = readPackage(dir);
    return { dir, name: p.name, version: p.version, declared: { ...p.devDependencies, ...p.dependencies } };
  });
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".") || SKIPPED_DIRS.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, out);
    else if (SOURCE.test(entry.name)) out.push(path);
  }
  return out;
}

/** The workspace a path (absolute) lies in; undefined outside every workspace (the root's test/, bench/). */
function workspaceOf(all: readonly Workspace[], path: string): Workspace | undefined {
  const rel = relative(repoRoot, path);
  return all.find((w) => rel === w.dir || rel.startsWith(w.dir + sep));
}

/** Every import the files of `workspace` make of another workspace. */
export function importsOf(workspace: Workspace, all: readonly Workspace[]): WorkspaceImport[] {
  const found: WorkspaceImport[] = [];
  for (const file of sourceFiles(join(repoRoot, workspace.dir))) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    for (const { fileName: specifier } of importedFiles) {
      let target: Workspace | undefined;
      let byPath = false;
      if (specifier.startsWith("@corral/")) {
        const name = specifier.split("/").slice(0, 2).join("/");
        if (name === workspace.name) continue;
        target = all.find((w) => w.name === name);
      } else if (specifier.startsWith(".")) {
        target = workspaceOf(all, resolve(dirname(file), specifier));
        if (!target || target === workspace) continue;
        byPath = true;
      } else continue;
      found.push({ file: relative(repoRoot, file), specifier, target, byPath });
    }
  }
  return found;
}

/** Cycles among workspaces through their declared dependencies, each as the names around it (first repeated last). */
export function dependencyCycles(all: readonly Workspace[]): string[][] {
  const byName = new Map(all.map((w) => [w.name, w]));
  const cycles: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (name: string) => {
    const at = path.indexOf(name);
    if (at >= 0) {
      cycles.push([...path.slice(at), name]);
      return;
    }
    if (done.has(name)) return;
    path.push(name);
    for (const dep of Object.keys(byName.get(name)?.declared ?? {})) if (byName.has(dep)) visit(dep);
    path.pop();
    done.add(name);
  };
  for (const w of all) visit(w.name);
  return cycles;
}
