// `node --import=tsx deploy/bin/systemd-units.ts`: rewrites deploy/systemd/ from deploy/src/systemd-units.ts.
import { join } from "node:path";
import { repoRoot } from "../src/paths.js";
import { writeSystemdUnits } from "../src/systemd-units.js";

const dir = join(repoRoot, "deploy", "systemd");
const written = await writeSystemdUnits(dir);
console.log(`[systemd-units] wrote ${written.length} units to ${dir}: ${written.join(", ")}`);
