import { join, resolve } from "node:path";
import { repoRoot } from "./paths.js";

/** What the launcher reads from the environment. */
export interface LauncherConfig {
  /** External NATS to use instead of the embedded nats-server (`CORRAL_NATS_URL`). */
  natsUrl?: string;
  /** External Redis to use instead of the embedded redis-server (`CORRAL_REDIS_URL`). */
  redisUrl?: string;
  /** Server data, kept across restarts (`CORRAL_DATA_DIR`). @default `<repo>/.corral/data` */
  dataDir: string;
  /** Port of the REST API (`CORRAL_SERVER_PORT`). @default 55054 */
  serverPort: number;
  /** JetStream `sync_interval: always` (`CORRAL_JETSTREAM_SYNC_ALWAYS`). @default true */
  jetstreamSyncAlways: boolean;
}

/** Reads the launcher's settings; throws a message naming the variable when one is malformed. */
export function loadLauncherConfig(env: NodeJS.ProcessEnv = process.env): LauncherConfig {
  return {
    natsUrl: nonEmpty(env["CORRAL_NATS_URL"]),
    redisUrl: nonEmpty(env["CORRAL_REDIS_URL"]),
    dataDir: resolve(nonEmpty(env["CORRAL_DATA_DIR"]) ?? join(repoRoot, ".corral", "data")),
    serverPort: parsePort("CORRAL_SERVER_PORT", env["CORRAL_SERVER_PORT"], 55054),
    jetstreamSyncAlways: parseBoolean("CORRAL_JETSTREAM_SYNC_ALWAYS", env["CORRAL_JETSTREAM_SYNC_ALWAYS"], true),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value?.trim() ? value.trim() : undefined;
}

function parsePort(name: string, value: string | undefined, fallback: number): number {
  const text = nonEmpty(value);
  if (text === undefined) {
    return fallback;
  }
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new Error(`${name} must be a port number from 1 to 65535, got "${text}"`);
  }
  return port;
}

function parseBoolean(name: string, value: string | undefined, fallback: boolean): boolean {
  const text = nonEmpty(value)?.toLowerCase();
  if (text === undefined) {
    return fallback;
  }
  if (["1", "true", "yes", "on"].includes(text)) {
    return true;
  }
  if (["0", "false", "no", "off"].includes(text)) {
    return false;
  }
  throw new Error(`${name} must be true or false, got "${value}"`);
}
