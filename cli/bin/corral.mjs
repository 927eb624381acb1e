#!/usr/bin/env node
// The `corral` command. A packed or installed tarball carries one bundled file (dist/corral.mjs, made at
// `npm pack`); in the repository the TypeScript source runs under tsx, registered in this process so that
// signals, the terminal and the exit code need no passing on.
import { existsSync } from "node:fs";

const bundle = new URL("../dist/corral.mjs", import.meta.url);
if (existsSync(bundle)) {
  await import(bundle.href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import(new URL("../src/main.ts", import.meta.url).href);
}
