// `node --conditions=corral-compiled deploy/dist/commands/docker-config.js <dir>`: the config step of
// deploy/docker/compose.yaml. Writes the credentials (first run only), nats.conf, redis-password.conf and every
// process's connection file into <dir>.
import { writeDockerConfig } from "../docker-config.js";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node --conditions=corral-compiled deploy/dist/commands/docker-config.js <dir>");
  process.exit(2);
}
const written = await writeDockerConfig(dir);
console.log(`[docker-config] wrote ${written.join(", ")} to ${dir}`);
