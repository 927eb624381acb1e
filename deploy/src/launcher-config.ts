import { resolve } from "node:path";
import { instancesKey, loadConfig, METRICS_PROCESSES, type CorralConfig, type MetricsProcess } from "@corral/shared";
import { repoRoot } from "./paths.js";
import { CORRAL_SERVICES } from "./service-access.js";
import { parseSharedServices } from "./shared-process.js";

/** What the launcher needs from the configuration (keys and environment variables as in docs/configuration.md). */
export interface LauncherConfig {
  /** External NATS instead of the embedded nats-server (`nats.url`, `CORRAL_NATS_URL`), when set. */
  natsUrl?: string;
  /** External Redis instead of the embedded redis-server (`redis.url`, `CORRAL_REDIS_URL`), when set. */
  redisUrl?: string;
  /** Server data and the bus credentials, kept across restarts (`data.dir`, `CORRAL_DATA_DIR`). @default `<repo>/.corral/data` */
  dataDir: string;
  /** Port of the embedded nats-server; undefined: any free port (`nats.embedded.port`, 0). @default 4222 */
  natsPort: number | undefined;
  /** Port of the embedded redis-server; undefined: any free port (`redis.embedded.port`, 0). @default 6379 */
  redisPort: number | undefined;
  /** Port of the REST API (`server.port`). @default 55054 */
  serverPort: number;
  /** JetStream `sync_interval: always` (`nats.syncAlways`). @default true */
  jetstreamSyncAlways: boolean;
  /** How many embedded nats-servers: 1, or 3 as a JetStream cluster (`nats.embedded.nodes`). @default 1 */
  natsNodes: number;
  /** Replicas of streams, buckets and object stores; 0: from the server count (`nats.replicas`). @default 0 */
  natsReplicas: number;
  /** The audit log's retention (`audit.maxAgeDays`, `audit.maxBytes`), applied when the bus is prepared. */
  auditRetention: { maxAgeDays: number; maxBytes: number };
  /** Also run local provisioners (`provisioner.local.enabled`). @default true */
  localProvisioner: boolean;
  /** How many instances of each process to run (`instances.<process>`). @default 1 each */
  instances: Readonly<Record<MetricsProcess, number>>;
  /** Services run together in one process (`launcher.sharedProcess`). @default auth, metrics, plugins, webhooks */
  sharedServices: string[];
}

/** More would only starve a machine of memory; a typo like 100 should say so rather than start them. */
const MAX_INSTANCES = 32;

/** Reads the launcher's settings through the shared configuration; a malformed value names its key. */
export function loadLauncherConfig(env: NodeJS.ProcessEnv = process.env): LauncherConfig {
  const config = loadConfig({ env });
  const port = config.get("server.port");
  if (!isPort(port)) {
    throw new Error(`server.port must be a port number from 1 to 65535, got ${port}`);
  }
  const embeddedPort = (key: "nats.embedded.port" | "redis.embedded.port"): number | undefined => {
    const value = config.get(key);
    if (value !== 0 && !isPort(value)) {
      throw new Error(`${key} must be 0 (any free port) or a port number from 1 to 65535, got ${value}`);
    }
    return value === 0 ? undefined : value;
  };
  return {
    ...(config.isSet("nats.url") && config.get("nats.url") ? { natsUrl: config.get("nats.url") } : {}),
    ...(config.isSet("redis.url") && config.get("redis.url") ? { redisUrl: config.get("redis.url") } : {}),
    dataDir: resolve(repoRoot, config.get("data.dir")),
    natsPort: embeddedPort("nats.embedded.port"),
    redisPort: embeddedPort("redis.embedded.port"),
    serverPort: port,
    jetstreamSyncAlways: config.get("nats.syncAlways"),
    natsNodes: natsNodes(config.get("nats.embedded.nodes")),
    natsReplicas: config.get("nats.replicas"),
    auditRetention: { maxAgeDays: config.get("audit.maxAgeDays"), maxBytes: config.get("audit.maxBytes") },
    localProvisioner: config.get("provisioner.local.enabled"),
    instances: instanceCounts(config),
    sharedServices: parseSharedServices(config.get("launcher.sharedProcess"), CORRAL_SERVICES),
  };
}

function instanceCounts(config: CorralConfig): Record<MetricsProcess, number> {
  const counts = {} as Record<MetricsProcess, number>;
  for (const process of METRICS_PROCESSES) {
    const key = instancesKey(process);
    const count = config.get(key);
    if (!Number.isInteger(count) || count < 1 || count > MAX_INSTANCES) {
      throw new Error(`${key} must be a whole number of instances from 1 to ${MAX_INSTANCES}, got ${count}`);
    }
    counts[process] = count;
  }
  return counts;
}

/** One server, or a cluster of three: the smallest that keeps a majority when one node dies. */
function natsNodes(value: number): number {
  if (value !== 1 && value !== 3) {
    throw new Error(`nats.embedded.nodes must be 1 (one nats-server) or 3 (a local JetStream cluster), got ${value}`);
  }
  return value;
}

function isPort(value: number): boolean {
  return Number.isInteger(value) && value >= 1 && value <= 65_535;
}
