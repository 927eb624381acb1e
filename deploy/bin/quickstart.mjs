#!/usr/bin/env node
// `npm run quickstart`: with `npm start` running, creates a three-node demo cluster (real containers where
// Docker is available, simulated machines elsewhere) and shows how to reach it (deploy/src/quickstart.ts).
import { spawn } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const child = spawn(process.execPath, ["--import=tsx", join("deploy", "src", "quickstart.ts")], { cwd: root, stdio: "inherit" });
child.on("exit", (code) => process.exit(code ?? 1));
