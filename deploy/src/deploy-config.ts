import { copyFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { withUrlCredentials } from "@corral/contracts";
import { loadOrCreateBusCredentials, type BusCredentials } from "./bus-credentials.js";
import { natsUsers } from "./bus-permissions.js";
import { connectionFileOf, properties, writePrivately, type BusProcess } from "./connection-files.js";
import { CORRAL_SERVICES } from "./service-access.js";
import { makeCertificate, makeCertificateAuthority, type CertificateAuthority } from "./tls-files.js";

/** One machine of the NATS cluster. */
export interface NatsNode {
  /** Its address as clients and the other nodes reach it: an IP address or a DNS name (in its certificate). */
  host: string;
  /** @default 4222 */
  clientPort: number;
  /** Cluster route port. @default 6222 */
  routePort: number;
  /** Monitoring port (`/healthz`, `/jsz`), on the machine's loopback only. @default 8222 */
  monitorPort: number;
}

/** What {@link generateDeployConfig} writes, for nodes that may be three machines or (in tests) one. */
export interface DeployConfigOptions {
  nodes: readonly NatsNode[];
  /** Output directory (made mode 0700; its credentials.json is reused when present, so passwords stay). */
  outDir: string;
  /** Where a node's directory (`<outDir>/<node>/`) is installed on its machine. @default `/etc/corral/nats` */
  confDirOf?: (node: string) => string;
  /** JetStream store of a node on its machine. @default `/var/lib/corral/nats` */
  storeDirOf?: (node: string) => string;
  /** Where the connection directory is installed on the machines that run services. @default `/etc/corral` */
  connectionDir?: string;
  /** Address nats-server listens on (clients and routes). @default `0.0.0.0` */
  listenHost?: string;
  /** Sign with this CA instead of making one. */
  ca?: CertificateAuthority;
  /** Redis of the services (gateway, metrics, auth). @default `redis://:<password>@<first host>:6379` */
  redisUrl?: string;
}

/** What was written: file paths by role. */
export interface DeployConfig {
  credentials: BusCredentials;
  /** Per node: its directory, nats-server config, server name. */
  nodes: Array<{ name: string; dir: string; confFile: string; node: NatsNode }>;
  /** Connection file of each process (`CORRAL_CONFIG=<file>`), and the environment file with the CA. */
  connections: Record<BusProcess, string>;
  envFile: string;
  caFile: string;
}

export const DEFAULT_PORTS = { clientPort: 4222, routePort: 6222, monitorPort: 8222 } as const;
const CLUSTER_NAME = "corral";
const WRITER = "npm run deploy-config";

/**
 * `host[:clientPort[:routePort[:monitorPort]]]`, each port defaulting to the standard one; a 400-style message
 * naming the part when malformed.
 */
export function parseNode(spec: string): NatsNode {
  const [host, ...ports] = spec.trim().split(":");
  if (!host || ports.length > 3) throw new Error(`--hosts: "${spec}" is not host[:clientPort[:routePort[:monitorPort]]]`);
  const port = (i: number, fallback: number): number => {
    const text = ports[i];
    if (text === undefined || text === "") return fallback;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1 || n > 65_535) throw new Error(`--hosts: port "${text}" of "${spec}" is not a port number`);
    return n;
  };
  return { host, clientPort: port(0, DEFAULT_PORTS.clientPort), routePort: port(1, DEFAULT_PORTS.routePort), monitorPort: port(2, DEFAULT_PORTS.monitorPort) };
}

/**
 * Writes what an operator deploys NATS and Corral's connections with:
 * - `<outDir>/credentials.json`: the admin, each service's and the provisioner's NATS login, the Redis password;
 * - `<outDir>/tls/`: the CA (made with openssl unless given) and its key, which stays here;
 * - `<outDir>/nats-<i>/`: per node, `nats-server.conf` (cluster routes to the others over mutually verified TLS,
 *   TLS required of clients, JetStream with `sync_interval: always`, the users and their permissions) and `tls/`;
 * - `<outDir>/connection/`: `<process>.properties` for each service, the provisioner and the admin (all nodes'
 *   URLs with that user's login), `ca.pem`, and `corral.env` (NODE_EXTRA_CA_CERTS, so Node trusts the CA).
 * Secrets are mode 0600.
 */
export async function generateDeployConfig(options: DeployConfigOptions): Promise<DeployConfig> {
  const { nodes, outDir } = options;
  if (nodes.length === 0) throw new Error("--hosts: name at least one host (three for a JetStream cluster that survives a node's loss)");
  const { credentials } = await loadOrCreateBusCredentials(outDir);
  const tlsDir = join(outDir, "tls");
  await mkdir(tlsDir, { recursive: true, mode: 0o700 });
  const ca = options.ca ?? (await makeCertificateAuthority(tlsDir, "Corral NATS CA"));
  const names = nodes.map((_, i) => `nats-${i + 1}`);
  const written: DeployConfig["nodes"] = [];
  for (const [i, node] of nodes.entries()) {
    const name = names[i] ?? `nats-${i + 1}`;
    const dir = join(outDir, name);
    await mkdir(join(dir, "tls"), { recursive: true, mode: 0o700 });
    // localhost too: clients on the machine itself (nats.js names 127.0.0.1 so when it checks the certificate).
    await makeCertificate(ca, join(dir, "tls"), "server", [node.host, "localhost", "127.0.0.1"]);
    await copyFile(ca.certFile, join(dir, "tls", "ca.pem"));
    const others = nodes.filter((_, j) => j !== i);
    const confFile = join(dir, "nats-server.conf");
    await writePrivately(confFile, natsServerConfig({ ...options, name, node, others, credentials }));
    written.push({ name, dir, confFile, node });
  }
  const connectionDir = join(outDir, "connection");
  await mkdir(connectionDir, { recursive: true, mode: 0o700 });
  const caFile = join(connectionDir, "ca.pem");
  await copyFile(ca.certFile, caFile);
  const urls = nodes.map((n) => `tls://${hostInUrl(n.host)}:${n.clientPort}`).join(",");
  const redisUrl = options.redisUrl ?? `redis://:${credentials.redisPassword}@${hostInUrl(nodes[0]?.host ?? "localhost")}:6379`;
  const connections = {} as Record<BusProcess, string>;
  const write = async (process: BusProcess, who: string, natsUrl: string, redis?: string) => {
    connections[process] = join(connectionDir, connectionFileOf(process));
    await writePrivately(connections[process], properties(who, WRITER, { natsUrl, ...(redis ? { redisUrl: redis } : {}) }));
  };
  for (const service of CORRAL_SERVICES) await write(service, `the ${service} service`, withUrlCredentials(urls, credentials.services[service]), redisUrl);
  await write("provisioner", "a provisioner", withUrlCredentials(urls, credentials.provisioner));
  await write("admin", "the admin (bus setup: deploy/src/commands/bus-setup.ts)", withUrlCredentials(urls, credentials.admin));
  const envFile = join(connectionDir, "corral.env");
  const installedCa = join(options.connectionDir ?? "/etc/corral", "ca.pem");
  await writePrivately(envFile, `# Node trusts the NATS servers' CA (${WRITER}).\nNODE_EXTRA_CA_CERTS=${installedCa}\n`);
  return { credentials, nodes: written, connections, envFile, caFile };
}

function hostInUrl(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** One node's nats-server.conf. Strings are JSON (the config format reads it; `$` subjects stay literal). */
function natsServerConfig(input: DeployConfigOptions & { name: string; node: NatsNode; others: readonly NatsNode[]; credentials: BusCredentials }): string {
  const { name, node, others, credentials } = input;
  const q = (v: string) => JSON.stringify(v);
  const confDir = input.confDirOf?.(name) ?? "/etc/corral/nats";
  const listen = input.listenHost ?? "0.0.0.0";
  const tls = (indent: string, verify: boolean) => [
    `${indent}tls {`,
    `${indent}  cert_file: ${q(join(confDir, "tls", "server-cert.pem"))}`,
    `${indent}  key_file: ${q(join(confDir, "tls", "server-key.pem"))}`,
    `${indent}  ca_file: ${q(join(confDir, "tls", "ca.pem"))}`,
    ...(verify ? [`${indent}  verify: true`] : []),
    `${indent}  timeout: 5`,
    `${indent}}`,
  ];
  return [
    `# nats-server ${name} of Corral's ${CLUSTER_NAME} cluster; written by ${WRITER}. Secret: mode 0600.`,
    `server_name: ${q(name)}`,
    `listen: ${q(`${listen}:${node.clientPort}`)}`,
    `# Monitoring (/healthz, /jsz) on this machine only.`,
    `http: ${q(`127.0.0.1:${node.monitorPort}`)}`,
    `max_payload: ${8 * 1024 * 1024}`,
    `# Clients must use TLS; they log in with a user below.`,
    ...tls("", false),
    `cluster {`,
    `  name: ${q(CLUSTER_NAME)}`,
    `  listen: ${q(`${listen}:${node.routePort}`)}`,
    `  # Routes are authenticated by certificates of the same CA, both ways.`,
    ...tls("  ", true),
    `  routes: [${others.map((o) => q(`nats-route://${hostInUrl(o.host)}:${o.routePort}`)).join(", ")}]`,
    `}`,
    `jetstream {`,
    `  store_dir: ${q(input.storeDirOf?.(name) ?? "/var/lib/corral/nats")}`,
    `  # Every write reaches the disk before it is acknowledged.`,
    `  sync_interval: always`,
    `}`,
    `# A user per service and for provisioners, each allowed only what it uses (deploy/src/bus-permissions.ts); the admin`,
    `# creates the streams and buckets (deploy/src/commands/bus-setup.ts).`,
    `authorization {`,
    `  users = [`,
    ...natsUsers(credentials).map((u) => `    ${JSON.stringify(u)}`),
    `  ]`,
    `}`,
    "",
  ].join("\n");
}
