import { join } from "node:path";
import { withUrlCredentials } from "@corral/contracts";
import { loadOrCreateBusCredentials } from "./bus-credentials.js";
import { natsUsers } from "./bus-permissions.js";
import { connectionFileOf, properties, writePrivately } from "./connection-files.js";
import { CORRAL_SERVICES } from "./service-access.js";
import type { NatsUser } from "./servers.js";

/** Where the containers of deploy/docker/compose.yaml find each other and keep their data. */
const CONTAINER = {
  natsUrl: "nats://nats:4222",
  redisUrl: "redis://redis:6379",
  natsStore: "/var/lib/corral/nats",
} as const;
const WRITER = "the config step of deploy/docker/compose.yaml";

/**
 * Writes the compose file's configuration into `dir` (its `config` volume, /etc/corral in every container): the
 * installation's credentials (made at the first run, kept after), `nats.conf` (JetStream, every process's NATS user
 * with its permissions), `redis-password.conf` (deploy/redis/redis.conf includes it) and each process's connection
 * file (`gateway.properties`, ..., `provisioner.properties`, `admin.properties`: the bus setup's), all mode 0600.
 */
export async function writeDockerConfig(dir: string): Promise<string[]> {
  const { credentials } = await loadOrCreateBusCredentials(dir);
  const redisUrl = withUrlCredentials(CONTAINER.redisUrl, { user: "", password: credentials.redisPassword });
  const natsUrlOf = (login: { user: string; password: string }) => withUrlCredentials(CONTAINER.natsUrl, login);
  const files: [string, string][] = [
    ["nats.conf", natsConfig(natsUsers(credentials))],
    // The password is hex (bus-credentials.ts): nothing in it needs quoting for redis.conf.
    ["redis-password.conf", `requirepass "${credentials.redisPassword}"\n`],
    ...CORRAL_SERVICES.map((service): [string, string] => [
      connectionFileOf(service),
      properties(`the ${service} service`, WRITER, { natsUrl: natsUrlOf(credentials.services[service]), redisUrl }),
    ]),
    [connectionFileOf("provisioner"), properties("a provisioner", WRITER, { natsUrl: natsUrlOf(credentials.provisioner) })],
    [connectionFileOf("admin"), properties("the admin (bus setup: deploy/src/commands/bus-setup.ts)", WRITER, { natsUrl: natsUrlOf(credentials.admin) })],
  ];
  for (const [name, text] of files) {
    await writePrivately(join(dir, name), text);
  }
  return files.map(([name]) => name);
}

/** One nats-server for the containers: clients on 4222, monitoring (the health check) on 8222, JetStream synced always. */
function natsConfig(users: NatsUser[]): string {
  return [
    "# Written by the config step of deploy/docker/compose.yaml at every start.",
    "server_name: corral-nats",
    "listen: 0.0.0.0:4222",
    "http: 0.0.0.0:8222",
    // As the launcher's: plugin resource chunks and large catalogs fit.
    "max_payload: 8388608",
    "jetstream {",
    `  store_dir: ${JSON.stringify(CONTAINER.natsStore)}`,
    "  sync_interval: always",
    "}",
    // The config format reads JSON; quoted strings are never taken for `$variables` (subjects start with `$`).
    "authorization {",
    "  users = [",
    ...users.map((u) => `    ${JSON.stringify(u)}`),
    "  ]",
    "}",
    "",
  ].join("\n");
}
