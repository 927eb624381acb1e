/**
 * Where each workspace's compiled JavaScript is and how a process runs it (docs/operations.md, "Compiled
 * JavaScript"). A workspace's `src/x.ts` compiles to its `dist/x.js`, at the same depth, so paths a module
 * computes from its own location (`../package.json`, the repository's docs/) hold in both; console's build.ts,
 * outside src/, compiles to console/dist/build.js. Each package.json export names both: the compiled file under the
 * {@link COMPILED_CONDITION} condition, the TypeScript source as the default, so `node
 * --conditions=corral-compiled` loads only compiled JavaScript and tsx (tests, development) only sources.
 */
import { posix } from "node:path";
import { fileURLToPath } from "node:url";

/** The package.json "exports" condition whose targets are the compiled JavaScript. */
export const COMPILED_CONDITION = "corral-compiled";

/** How a Corral process runs: its compiled JavaScript with plain node, or its TypeScript sources through tsx. */
export type Runtime = "compiled" | "tsx";

/** How this process runs: this module is deploy/dist/compiled.js when compiled, deploy/src/compiled.ts under tsx. */
export const currentRuntime: Runtime = fileURLToPath(import.meta.url).endsWith(".ts") ? "tsx" : "compiled";

/**
 * The compiled file of a source file, both relative to their workspace (`src/a/b.ts` -> `dist/a/b.js`,
 * `build.ts` -> `dist/build.js`), or of a package.json export target (`./src/index.ts` -> `./dist/index.js`).
 */
export function compiledPathOf(source: string): string {
  const dotted = source.startsWith("./");
  const path = posix.normalize(source);
  if (!path.endsWith(".ts") || path.endsWith(".d.ts")) throw new Error(`${source} is not a TypeScript source`);
  const inDist = posix.join("dist", path.startsWith("src/") ? path.slice("src/".length) : path).replace(/\.ts$/, ".js");
  return dotted ? `./${inDist}` : inDist;
}

/**
 * The compiled entry of an entry given relative to the repository root (`services/gateway/src/index.ts` ->
 * `services/gateway/dist/index.js`): its workspace is the part before `src/`.
 */
export function compiledEntryOf(entry: string): string {
  const at = entry.lastIndexOf("/src/");
  if (at < 0) throw new Error(`${entry} is not under a workspace's src/`);
  return posix.join(entry.slice(0, at), compiledPathOf(entry.slice(at + 1)));
}

/**
 * What a compiled process loads before its entry, relative to the repository root (the working directory of every
 * Corral process): a garbage collection once it goes idle (idle-gc.ts), for which node needs --expose-gc.
 */
export const COMPILED_PRELOAD = ["--expose-gc", "--import=./deploy/dist/preload-idle-gc.js"] as const;

/**
 * The node arguments that run `entry` (a source path relative to the repository root, which must be the working
 * directory) under `runtime`: compiled with {@link COMPILED_PRELOAD}, or the sources through tsx.
 */
export function nodeArgsOf(entry: string, runtime: Runtime = currentRuntime): string[] {
  return runtime === "compiled" ? [`--conditions=${COMPILED_CONDITION}`, ...COMPILED_PRELOAD, compiledEntryOf(entry)] : ["--import=tsx", entry];
}
