// `npm run build` (`node --import=tsx deploy/bin/build.ts [--force]`): compiles every workspace the services and
// provisioners load into its dist/ (deploy/src/build.ts) when that is missing or older than the sources, or always
// with --force. `npm start` does this itself; systemd and image installations run it after `npm ci`.
import { buildCompiled } from "../src/build.js";

const force = process.argv.includes("--force");
const result = await buildCompiled({ force, log: (line) => console.log(`[build] ${line}`) });
if (!result.built) console.log("[build] the compiled JavaScript is up to date");
