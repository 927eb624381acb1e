import { join, resolve } from "node:path";
import { BadRequestError } from "@corral/contracts";
import { loadConfig, type LogLevel } from "@corral/shared";
import { parsePluginModules } from "./plugin-modules.js";

/** What the provisioner process reads from its environment, checked once. */
export interface ProvisionerConfig {
  natsUrl: string;
  logLevel: LogLevel;
  /** `CORRAL_PROVISIONER_ID`; unset -> `<hostname>-<pid>-<random>`. */
  id: string | undefined;
  /** `CORRAL_PROVISIONER_HOST`; unset -> the hostname. */
  host: string | undefined;
  /** `CORRAL_PROVISIONER_CAPACITY`. @default 10 */
  capacity: number;
  /** `CORRAL_PROVISIONER_WORKDIR`. @default `<data.dir>/provisioner` */
  workDir: string;
  /** `CORRAL_PROVISIONER_STOP_TIMEOUT_MS`: how long SIGTERM waits for running tasks. @default 60000 */
  stopTimeoutMs: number;
  /** `CORRAL_PROVISIONER_SSH_MAX_CONNECTIONS`: most SSH connections open at once. @default 256 */
  maxSshConnections: number;
  /** `CORRAL_PROVISIONER_SIM_SECURED`: also carry provider `sim-secured` (tests of provider fields). @default false */
  simSecured: boolean;
  /** Shared key `provisioner.plugins`: plugin modules to load besides the bundled plugins. */
  pluginModules: string[];
  /** Shared key `provisioner.health.intervalMs`: between two rounds of node health checks (0: none). @default 30000 */
  healthIntervalMs: number;
}

/** Reads the shared keys through `loadConfig` and the provisioner's own `CORRAL_PROVISIONER_*` variables. */
export function loadProvisionerConfig(env: Record<string, string | undefined>): ProvisionerConfig {
  const shared = loadConfig({ env });
  const text = (name: string) => {
    const v = env[name]?.trim();
    return v ? v : undefined;
  };
  const positiveInt = (name: string, fallback: number) => {
    const raw = text(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n <= 0) throw new BadRequestError(`${name} must be a positive integer, got "${raw}"`);
    return n;
  };
  const flag = (name: string) => {
    const raw = text(name)?.toLowerCase();
    if (raw === undefined || raw === "false") return false;
    if (raw === "true") return true;
    throw new BadRequestError(`${name} must be true or false, got "${raw}"`);
  };
  return Object.freeze({
    natsUrl: shared.get("nats.url"),
    logLevel: shared.get("log.level") as LogLevel,
    id: text("CORRAL_PROVISIONER_ID"),
    host: text("CORRAL_PROVISIONER_HOST"),
    capacity: positiveInt("CORRAL_PROVISIONER_CAPACITY", 10),
    workDir: resolve(text("CORRAL_PROVISIONER_WORKDIR") ?? join(shared.get("data.dir"), "provisioner")),
    stopTimeoutMs: positiveInt("CORRAL_PROVISIONER_STOP_TIMEOUT_MS", 60_000),
    maxSshConnections: positiveInt("CORRAL_PROVISIONER_SSH_MAX_CONNECTIONS", 256),
    simSecured: flag("CORRAL_PROVISIONER_SIM_SECURED"),
    pluginModules: parsePluginModules(shared.get("provisioner.plugins")),
    healthIntervalMs: nonNegativeMs("provisioner.health.intervalMs", shared.get("provisioner.health.intervalMs")),
  });
}

function nonNegativeMs(key: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) throw new BadRequestError(`${key} must be a whole number of milliseconds, 0 or more, got ${value}`);
  return value;
}
