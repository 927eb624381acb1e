// `npm run deploy-config -- --hosts a,b,c --out <dir>`: writes the NATS cluster configuration of a three-machine
// deployment (deploy/src/deploy-config.ts): per node a nats-server.conf with TLS, routes, JetStream and a user per
// service, the CA and certificates (openssl), and each process's connection file. Run again with the same --out to
// keep the passwords (credentials.json) and renew the rest.
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { generateDeployConfig, parseNode } from "../src/deploy-config.js";

const USAGE = `usage: npm run deploy-config -- --hosts <host[:client[:route[:monitor]]]>,... --out <dir>
  [--conf-dir /etc/corral/nats] [--store-dir /var/lib/corral/nats] [--connection-dir /etc/corral]
  [--ca-cert <pem> --ca-key <pem>] [--redis-url redis://:<password>@<host>:6379]`;

try {
  const { values } = parseArgs({
    options: {
      hosts: { type: "string" },
      out: { type: "string" },
      "conf-dir": { type: "string" },
      "store-dir": { type: "string" },
      "connection-dir": { type: "string" },
      "ca-cert": { type: "string" },
      "ca-key": { type: "string" },
      "redis-url": { type: "string" },
    },
  });
  if (!values.hosts || !values.out) throw new Error("--hosts and --out are required");
  if (Boolean(values["ca-cert"]) !== Boolean(values["ca-key"])) throw new Error("--ca-cert and --ca-key go together");
  const confDir = values["conf-dir"];
  const storeDir = values["store-dir"];
  const written = await generateDeployConfig({
    nodes: values.hosts.split(",").map(parseNode),
    outDir: resolve(values.out),
    ...(confDir ? { confDirOf: () => confDir } : {}),
    ...(storeDir ? { storeDirOf: () => storeDir } : {}),
    ...(values["connection-dir"] ? { connectionDir: values["connection-dir"] } : {}),
    ...(values["ca-cert"] && values["ca-key"] ? { ca: { certFile: resolve(values["ca-cert"]), keyFile: resolve(values["ca-key"]) } } : {}),
    ...(values["redis-url"] ? { redisUrl: values["redis-url"] } : {}),
  });
  for (const n of written.nodes) console.log(`[deploy-config] ${n.node.host}: copy ${n.dir}/ to ${confDir ?? "/etc/corral/nats"}/ (nats-server -c nats-server.conf)`);
  console.log(`[deploy-config] service machines: copy ${written.connections.gateway.replace(/\/[^/]*$/, "")}/ to ${values["connection-dir"] ?? "/etc/corral"}/`);
} catch (err) {
  console.error(`[deploy-config] ${(err as Error).message}\n${USAGE}`);
  process.exit(2);
}
