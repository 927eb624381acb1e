#!/usr/bin/env node
// `npm run lxd-image [-- --force]`: installs dependencies when missing, then makes sure LXD has the image
// corral/node-bookworm (deploy/src/lxd-image.ts, run under tsx): built with debootstrap from this machine's apt
// sources and imported when missing or of an older build; --force rebuilds and imports it again. Installs lxd and
// dnsmasq-base with apt-get and starts the daemon when needed. Plain JS so it runs before `npm install`.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const args = process.argv.slice(2);

if (args.includes("--help") || args.some((a) => a !== "--force")) {
  console.log("usage: npm run lxd-image [-- --force]   build and import the LXD image corral/node-bookworm unless LXD has it (--force: rebuild)");
  process.exit(args.includes("--help") ? 0 : 2);
}

if (!existsSync(join(root, "node_modules", "tsx"))) {
  console.log("[lxd-image] node_modules missing; running npm install");
  const npm = spawnSync("npm", ["install", "--no-audit", "--no-fund"], { cwd: root, stdio: "inherit" });
  if (npm.status !== 0) {
    console.error("[lxd-image] npm install failed");
    process.exit(npm.status ?? 1);
  }
}

const moduleUrl = pathToFileURL(join(root, "deploy", "src", "lxd-image.ts")).href;
const script = `
const { ensureLxdImage } = await import(${JSON.stringify(moduleUrl)});
const started = Date.now();
try {
  const image = await ensureLxdImage({ force: ${args.includes("--force")}, log: (line) => console.log("[lxd-image] " + line) });
  console.log("[lxd-image] " + image.alias + " (" + image.fingerprint.slice(0, 12) + ") ready (" + Math.round((Date.now() - started) / 1000) + " s)");
} catch (err) {
  console.error("[lxd-image] " + (err instanceof Error ? err.message : String(err)));
  process.exitCode = 1;
}
`;
const child = spawn(process.execPath, ["--import=tsx", "--input-type=module", "-e", script], { cwd: root, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (err) => {
  console.error(`[lxd-image] could not run node: ${err.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  process.exit(code ?? (signal ? 128 + ({ SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }[signal] ?? 0) : 1));
});
