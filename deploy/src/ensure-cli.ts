/**
 * `node --import=tsx deploy/src/ensure-cli.ts [nats] [redis] [slapd] [ansible]`: installs the server
 * binaries and tools the tests need (default: nats and redis) and prints their paths. Exits 1 with the
 * reason when one cannot be installed.
 */
import { ensureAnsible, ensureNatsServer, ensureRedisServer, ensureSlapd } from "./binaries.js";

const installers: Record<string, () => Promise<string>> = {
  nats: () => ensureNatsServer(),
  redis: () => ensureRedisServer(),
  slapd: async () => (await ensureSlapd()).slapd,
  ansible: async () => (await ensureAnsible()).ansiblePlaybook,
};

const wanted = process.argv.slice(2);
const names = wanted.length ? wanted : ["nats", "redis"];
let failed = false;
for (const name of names) {
  const install = installers[name];
  if (!install) {
    console.error(`unknown server "${name}"; expected one of ${Object.keys(installers).join(", ")}`);
    failed = true;
    continue;
  }
  try {
    console.log(`${name}: ${await install()}`);
  } catch (err) {
    console.error(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    failed = true;
  }
}
process.exitCode = failed ? 1 : 0;
