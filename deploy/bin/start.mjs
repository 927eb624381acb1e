#!/usr/bin/env node
// `npm start`: installs dependencies when missing, compiles the TypeScript when the compiled JavaScript is missing
// or older than the sources (deploy/src/build.ts), then runs the launcher (deploy/src/launcher.ts) compiled, in
// this process when node runs with --conditions=corral-compiled (as `npm start` does), else as a child.
// `CORRAL_RUNTIME=tsx npm start` runs the TypeScript sources through tsx instead, compiling nothing.
// Plain JS so it runs before `npm install` and before anything is compiled.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildProblem } from "./build-check.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const CONDITION = "corral-compiled";
const runtime = process.env["CORRAL_RUNTIME"] ?? "compiled";
if (runtime !== "compiled" && runtime !== "tsx") {
  console.error(`[start] CORRAL_RUNTIME must be compiled or tsx, got ${runtime}`);
  process.exit(2);
}

if (!existsSync(join(root, "node_modules", "tsx"))) {
  console.log("[start] node_modules missing; running npm install");
  runOrExit("npm install", "npm", ["install", "--no-audit", "--no-fund"]);
}

if (runtime === "tsx") {
  runLauncherChild(["--import=tsx", join("deploy", "src", "launcher.ts")]);
} else {
  const problem = buildProblem(root);
  if (problem) {
    console.log(`[start] compiling the TypeScript: ${problem}`);
    runOrExit("the build", process.execPath, ["--import=tsx", join("deploy", "bin", "build.ts")]);
  }
  const launcher = join(root, "deploy", "dist", "launcher.js");
  if (compiledConditionIsOn()) {
    await import(pathToFileURL(launcher).href);
  } else {
    runLauncherChild([`--conditions=${CONDITION}`, launcher]);
  }
}

/** Whether this process resolves workspace packages to their compiled JavaScript (node --conditions=corral-compiled). */
function compiledConditionIsOn() {
  try {
    return import.meta.resolve("@corral/shared").endsWith(".js");
  } catch {
    return false;
  }
}

/** Runs a command to its end with this terminal; exits with its code when it fails. */
function runOrExit(what, command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    console.error(`[start] ${what} failed`);
    process.exit(result.status ?? 1);
  }
}

/** Runs the launcher as a child with `args`, passing signals through and exiting with its code. */
function runLauncherChild(args) {
  const launcher = spawn(process.execPath, args, { cwd: root, stdio: "inherit" });
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
}

function signalNumber(signal) {
  return { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }[signal];
}
