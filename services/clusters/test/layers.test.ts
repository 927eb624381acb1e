/**
 * The clusters service's layers, one way only (docs/architecture.md, Layers of the clusters service): handlers call
 * operations and queries, operations call the actors, the actors and the engine reach NATS through the adapters,
 * and the domain is pure. `actor/` and `engine/` do not import each other: the engine (results consumer,
 * reconciler) gets the actors handed over by service.ts. Every import of src/ is read with the TypeScript
 * preprocessor (static imports, re-exports and `import()` alike).
 */
import test from "ava";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

const SRC = resolve(new URL("../src", import.meta.url).pathname);

/** What each layer (a folder of src/) may import besides itself. Files directly in src/ wire the layers and are free. */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  handlers: ["operations", "queries", "domain"],
  operations: ["actor", "queries", "adapters", "domain"],
  queries: ["adapters", "domain"],
  actor: ["adapters", "domain"],
  engine: ["adapters", "domain"],
  readers: ["adapters", "domain"],
  adapters: ["domain"],
  domain: [],
};

/** Packages only the adapters (and the wiring) may import: NATS is reached through them. */
const ADAPTER_PACKAGES = /^@nats-io\//;

/** One source file: its path under src/ (with `/`) and what it imports, as written. */
interface SourceFile {
  path: string;
  imports: string[];
}

const layerOf = (path: string): string | undefined => (path.includes("/") ? path.split("/")[0] : undefined);

/** Every import that goes against the layers, as `file -> import (why)`. */
function layerViolations(files: readonly SourceFile[]): string[] {
  const out: string[] = [];
  for (const file of files) {
    const layer = layerOf(file.path);
    if (layer === undefined) continue;
    const allowed = MAY_IMPORT[layer];
    if (!allowed) {
      out.push(`${file.path}: folder ${layer} is no known layer`);
      continue;
    }
    for (const specifier of file.imports) {
      if (!specifier.startsWith(".")) {
        if (layer !== "adapters" && ADAPTER_PACKAGES.test(specifier)) out.push(`${file.path} -> ${specifier} (only adapters reach NATS)`);
        continue;
      }
      const target = join(dirname(file.path), specifier).split(sep).join("/");
      if (target.startsWith("..")) {
        out.push(`${file.path} -> ${specifier} (outside src/)`);
        continue;
      }
      const targetLayer = layerOf(target);
      if (targetLayer === layer) continue;
      if (targetLayer === undefined) out.push(`${file.path} -> ${specifier} (a layer imports the wiring)`);
      else if (!allowed.includes(targetLayer)) out.push(`${file.path} -> ${specifier} (${layer} may not import ${targetLayer})`);
    }
  }
  return out;
}

function sourceFiles(dir: string, out: SourceFile[] = []): SourceFile[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, out);
    else if (entry.name.endsWith(".ts")) {
      const imports = ts.preProcessFile(readFileSync(path, "utf8"), true, true).importedFiles.map((f) => f.fileName);
      out.push({ path: relative(SRC, path).split(sep).join("/"), imports });
    }
  }
  return out;
}

test("layers - every import of src/ goes the one allowed way", (t) => {
  const files = sourceFiles(SRC);
  t.true(files.length > 50, "the sources were found");
  t.true(
    files.some((f) => f.path === "engine/reconciler.ts") && files.some((f) => f.path.startsWith("actor/")),
    "the layers are where this test looks",
  );
  t.deepEqual(layerViolations(files), []);
});

test("layers - the check refuses each forbidden direction", (t) => {
  const file = (path: string, ...imports: string[]): SourceFile => ({ path, imports });
  t.deepEqual(
    layerViolations([
      file("actor/effects.ts", "../engine/reconciler.js"),
      file("engine/reconciler.ts", "../actor/index.js", "../operations/index.js", "../domain/records.js"),
      file("handlers/clusters.ts", "../adapters/deps.js", "../operations/index.js"),
      file("adapters/cluster-store.ts", "../actor/index.js", "../domain/records.js", "@nats-io/jetstream"),
      file("domain/records.ts", "../queries/index.js", "@nats-io/kv", "@corral/contracts"),
      file("operations/index.ts", "../handlers/context.js", "../service.js", "../../test/helpers/core.js"),
      file("service.ts", "./engine/reconciler.js", "./actor/index.js"),
      file("extras/x.ts", "../domain/records.js"),
    ]),
    [
      "actor/effects.ts -> ../engine/reconciler.js (actor may not import engine)",
      "engine/reconciler.ts -> ../actor/index.js (engine may not import actor)",
      "engine/reconciler.ts -> ../operations/index.js (engine may not import operations)",
      "handlers/clusters.ts -> ../adapters/deps.js (handlers may not import adapters)",
      "adapters/cluster-store.ts -> ../actor/index.js (adapters may not import actor)",
      "domain/records.ts -> ../queries/index.js (domain may not import queries)",
      "domain/records.ts -> @nats-io/kv (only adapters reach NATS)",
      "operations/index.ts -> ../handlers/context.js (operations may not import handlers)",
      "operations/index.ts -> ../service.js (a layer imports the wiring)",
      "operations/index.ts -> ../../test/helpers/core.js (outside src/)",
      "extras/x.ts: folder extras is no known layer",
    ],
  );
});
