/**
 * Builds the console into memory: one bundled script (esbuild, from src/main.ts), its style sheet and the page
 * that loads both. The gateway calls this once when it starts and serves the result under `/ui/`.
 */
import { readFile } from "node:fs/promises";
import { build, stop } from "esbuild";

export interface ConsoleFile {
  bytes: Buffer;
  contentType: string;
}

/** The console's files by the name they are served under (`/ui/{name}`); `index.html` is also `/` and `/ui/`. */
export type ConsoleFiles = ReadonlyMap<string, ConsoleFile>;

// Compiled (deploy/src/compiled.ts), this module is console/dist/build.js and the sources are one directory up.
const consoleDir = new URL(import.meta.url.endsWith("/dist/build.js") ? "../" : "./", import.meta.url);
const source = (path: string) => new URL(path, consoleDir).pathname;

function indexPage(): Buffer {
  return Buffer.from(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Corral</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/ui/console.css">
</head>
<body>
<div id="app"></div>
<script type="module" src="/ui/console.js"></script>
</body>
</html>
`);
}

/** Builds under way in this process: esbuild's helper process is stopped when the last one ends. */
let building = 0;

export async function buildConsole(): Promise<ConsoleFiles> {
  building++;
  try {
    return await bundleConsole();
  } finally {
    // The gateway builds once, at its start: esbuild's helper process (about 40 MB) need not stay for its lifetime.
    if (--building === 0) await stop();
  }
}

async function bundleConsole(): Promise<ConsoleFiles> {
  const bundle = await build({
    entryPoints: [source("./src/main.ts")],
    bundle: true,
    format: "esm",
    target: "es2022",
    minify: true,
    write: false,
    outfile: "console.js",
    logLevel: "silent",
  });
  const script = bundle.outputFiles.find((f) => f.path.endsWith(".js"));
  if (!script) throw new Error("esbuild produced no console.js");
  return new Map<string, ConsoleFile>([
    ["index.html", { bytes: indexPage(), contentType: "text/html; charset=utf-8" }],
    ["console.js", { bytes: Buffer.from(script.contents), contentType: "text/javascript; charset=utf-8" }],
    ["console.css", { bytes: await readFile(source("./src/style.css")), contentType: "text/css; charset=utf-8" }],
  ]);
}
