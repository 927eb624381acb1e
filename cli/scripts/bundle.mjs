#!/usr/bin/env node
// `npm pack` (prepack): bundles the CLI with what it imports (@corral/contracts, yaml) into dist/corral.mjs, so the
// tarball installs without the repository or a registry; `--clean` (postpack) removes it again. `--outfile <path>`
// writes the bundle elsewhere (the CLI's tests run it: it starts in a sixth of the time tsx takes). esbuild comes
// with tsx.
import { rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");

if (process.argv.includes("--clean")) {
  await rm(dist, { recursive: true, force: true });
} else {
  const { build } = await import("esbuild");
  await build({
    entryPoints: [join(root, "src", "main.ts")],
    outfile: outfileArgument() ?? join(dist, "corral.mjs"),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // msgpackr (imported by the contracts' codec, unused here) looks for an optional native addon.
    external: ["msgpackr-extract"],
    // CommonJS inside the bundle (yaml, msgpackr) calls require() for Node's own modules.
    banner: { js: 'import { createRequire as __corralRequire } from "node:module"; const require = __corralRequire(import.meta.url);' },
    logLevel: "warning",
  });
}

function outfileArgument() {
  const at = process.argv.indexOf("--outfile");
  return at >= 0 ? process.argv[at + 1] : undefined;
}
