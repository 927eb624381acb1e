#!/usr/bin/env node
// `npm start`: installs dependencies when missing, then runs the launcher (deploy/src/launcher.ts)
// under tsx, passing signals through and exiting with its code. Plain JS so it runs before
// `npm install`.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

if (!existsSync(join(root, "node_modules", "tsx"))) {
  console.log("[start] node_modules missing; running npm install");
  const npm = spawnSync("npm", ["install", "--no-audit", "--no-fund"], { cwd: root, stdio: "inherit" });
  if (npm.status !== 0) {
    console.error("[start] npm install failed");
    process.exit(npm.status ?? 1);
  }
}

const launcher = spawn(process.execPath, ["--import=tsx", join("deploy", "src", "launcher.ts")], {
  cwd: root,
  stdio: "inherit",
});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => launcher.kill(signal));
}
launcher.on("error", (err) => {
  console.error(`[start] could not run the launcher: ${err.message}`);
  process.exit(1);
});
launcher.on("exit", (code, signal) => {
  process.exit(code ?? (signal ? 128 + (signalNumber(signal) ?? 0) : 1));
});

function signalNumber(signal) {
  return { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }[signal];
}
