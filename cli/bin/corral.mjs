#!/usr/bin/env node
// The `corral` command. In the repository (or a folder install, `npm install -g ./cli`) the TypeScript source runs
// under tsx, registered in this process so that signals, the terminal and the exit code need no passing on. A
// packed tarball carries no source but one bundled file made at `npm pack` (dist/corral.mjs), which runs as is.
import { existsSync } from "node:fs";

const source = new URL("../src/main.ts", import.meta.url);
if (existsSync(source)) {
  const { register } = await import("tsx/esm/api");
  register();
  await import(source.href);
} else {
  await import(new URL("../dist/corral.mjs", import.meta.url).href);
}
