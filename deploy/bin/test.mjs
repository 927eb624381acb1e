#!/usr/bin/env node
// `npm test [-- ava args]`: installs dependencies when missing, makes sure nats-server (2.10+) and
// redis-server exist, type-checks (counted as one test named "typecheck"), runs ava with TAP output
// teed to .ava.tap, and ends with the line "N passed, N failed". Exits non-zero on any failure.
// Plain JS so it runs before `npm install`.
import { spawn, spawnSync } from "node:child_process";
import { createWriteStream, existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const avaArgs = process.argv.slice(2);
const failedChecks = [];
let extraPassed = 0;

function step(title) {
  console.log(`\n[test] ${title}`);
}

function runInherit(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit" });
  if (result.error) {
    console.error(`[test] ${command} could not start: ${result.error.message}`);
  }
  return result.status ?? 1;
}

function summarize() {
  for (const name of failedChecks) {
    console.log(`[test] failed: ${name}`);
  }
}

const needed = ["tsx", "ava", "typescript"].map((p) => join(root, "node_modules", p));
if (!needed.every((p) => existsSync(p))) {
  step("node_modules missing; running npm install");
  if (runInherit("npm", ["install", "--no-audit", "--no-fund"]) !== 0) {
    console.log("[test] npm install failed");
    console.log("0 passed, 1 failed");
    process.exit(1);
  }
}

step("making sure nats-server (2.10+), redis-server and slapd are installed");
if (runInherit(process.execPath, ["--import=tsx", join("deploy", "src", "ensure-cli.ts"), "nats", "redis", "slapd"]) !== 0) {
  failedChecks.push("servers installed (nats-server, redis-server, slapd)");
}

step("typecheck: tsc --noEmit");
if (runInherit(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "--noEmit"]) === 0) {
  extraPassed++;
  console.log("[test] typecheck passed");
} else {
  failedChecks.push("typecheck");
}

step(`ava --tap ${avaArgs.join(" ")}`.trimEnd());
const tapPath = join(root, ".ava.tap");
const avaCode = await new Promise((resolvePromise) => {
  const tap = createWriteStream(tapPath);
  const ava = spawn(process.execPath, [join(root, "node_modules", "ava", "entrypoints", "cli.mjs"), "--tap", ...avaArgs], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  });
  ava.stdout.on("data", (chunk) => {
    process.stdout.write(chunk);
    tap.write(chunk);
  });
  ava.on("error", (err) => {
    console.error(`[test] ava could not start: ${err.message}`);
  });
  ava.on("close", (code) => tap.end(() => resolvePromise(code ?? 1)));
});

let passed = 0;
let failed = 0;
for (const line of readFileSync(tapPath, "utf8").split("\n")) {
  const m = /^# (pass|fail)\s+(\d+)/.exec(line);
  if (m) {
    if (m[1] === "pass") passed = Number(m[2]);
    else failed = Number(m[2]);
  }
}
if (avaCode !== 0 && failed === 0) {
  // ava failed without reporting a failed test (no test files, a crash, a timeout): count the run.
  failedChecks.push(`ava run (exit code ${avaCode})`);
}

passed += extraPassed;
failed += failedChecks.length;
console.log("");
summarize();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || avaCode !== 0 ? 1 : 0);
