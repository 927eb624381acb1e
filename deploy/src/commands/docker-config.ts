// `node --import=tsx deploy/bin/docker-config.ts <dir>`: the config step of deploy/docker/compose.yaml. Writes the
// credentials (first run only), nats.conf, redis-password.conf and every process's connection file into <dir>.
import { writeDockerConfig } from "../src/docker-config.js";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node --import=tsx deploy/bin/docker-config.ts <dir>");
  process.exit(2);
}
const written = await writeDockerConfig(dir);
console.log(`[docker-config] wrote ${written.join(", ")} to ${dir}`);
