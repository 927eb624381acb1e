#!/usr/bin/env node
// `npm run node-image [-- --force]`: installs dependencies when missing, then builds the Docker image
// corral/node:bookworm (deploy/src/node-image.ts) under tsx unless it exists; --force rebuilds.
// Starts dockerd when it is not running. Plain JS so it runs before `npm install`.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const args = process.argv.slice(2);

if (args.includes("--help") || args.some((a) => a !== "--force")) {
  console.log("usage: npm run node-image [-- --force]   build corral/node:bookworm unless it exists (--force: rebuild)");
  process.exit(args.includes("--help") ? 0 : 2);
}

if (!existsSync(join(root, "node_modules", "tsx"))) {
  console.log("[node-image] node_modules missing; running npm install");
  const npm = spawnSync("npm", ["install", "--no-audit", "--no-fund"], { cwd: root, stdio: "inherit" });
  if (npm.status !== 0) {
    console.error("[node-image] npm install failed");
    process.exit(npm.status ?? 1);
  }
}

const moduleUrl = pathToFileURL(join(root, "deploy", "src", "node-image.ts")).href;
const script = `
const { ensureNodeImage } = await import(${JSON.stringify(moduleUrl)});
const started = Date.now();
try {
  const image = await ensureNodeImage({ force: ${args.includes("--force")}, log: (line) => console.log("[node-image] " + line) });
  console.log("[node-image] " + image + " ready (" + Math.round((Date.now() - started) / 1000) + " s)");
} catch (err) {
  console.error("[node-image] " + (err instanceof Error ? err.message : String(err)));
  process.exitCode = 1;
}
`;
const child = spawn(process.execPath, ["--import=tsx", "--input-type=module", "-e", script], { cwd: root, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (err) => {
  console.error(`[node-image] could not run node: ${err.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  process.exit(code ?? (signal ? 128 + ({ SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }[signal] ?? 0) : 1));
});
