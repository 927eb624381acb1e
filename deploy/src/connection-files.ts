import { open, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { CORRAL_SERVICES, type CorralService } from "./service-access.js";

/** How one kind of process reaches the bus: what its connection file holds. */
export interface ConnectionSettings {
  natsUrl: string;
  /** Absent for provisioners, which do not use Redis. */
  redisUrl?: string;
}

/** Name of a process's connection file in the data dir: `gateway.properties`, `provisioner.properties`, ... */
export const connectionFileOf = (process: BusProcess) => `${process}.properties`;
/** Who has a connection file: each service, provisioners, and the admin (bus setup and operators' tools). */
export type BusProcess = CorralService | "provisioner" | "admin";
/** The file of releases with one services user; removed, since that user is now the admin. */
const RETIRED_SERVICES_FILE = "services.properties";

/**
 * Writes `<dataDir>/<service>.properties` for each service, `provisioner.properties` and `admin.properties` (mode 0600):
 * config files (`CORRAL_CONFIG=<file>`) with the URLs, its own NATS user's credentials included, of this start's
 * servers, so a service or provisioner an operator starts by hand connects like the launcher's own. Rewritten at
 * every start (a port may change); each replaces the old one whole, so a reader never sees half a file.
 */
export async function writeConnectionFiles(
  dataDir: string,
  settings: { services: Record<CorralService, ConnectionSettings>; provisioner: ConnectionSettings; admin: ConnectionSettings },
): Promise<Record<BusProcess, string>> {
  const written = {} as Record<BusProcess, string>;
  for (const service of CORRAL_SERVICES) {
    written[service] = join(dataDir, connectionFileOf(service));
    await writePrivately(written[service], properties(`the ${service} service`, "npm start", settings.services[service]));
  }
  written.provisioner = join(dataDir, connectionFileOf("provisioner"));
  await writePrivately(written.provisioner, properties("a provisioner", "npm start", settings.provisioner));
  written.admin = join(dataDir, connectionFileOf("admin"));
  await writePrivately(written.admin, properties("the admin (bus setup, operators' tools)", "npm start", settings.admin));
  await rm(join(dataDir, RETIRED_SERVICES_FILE), { force: true });
  return written;
}

/** A connection file's text: what `writer` wrote for `who`. */
export function properties(who: string, writer: string, settings: ConnectionSettings): string {
  return [
    `# How ${who} reaches this installation's NATS${settings.redisUrl ? " and Redis" : ""}; written by ${writer}.`,
    `# Use: CORRAL_CONFIG=<this file> node --conditions=corral-compiled <workspace>/dist/index.js. Secret: keep it mode 0600.`,
    `nats.url=${settings.natsUrl}`,
    ...(settings.redisUrl ? [`redis.url=${settings.redisUrl}`] : []),
    "",
  ].join("\n");
}

export async function writePrivately(path: string, text: string): Promise<void> {
  const partial = `${path}.partial-${process.pid}`;
  const file = await open(partial, "w", 0o600);
  try {
    await file.chmod(0o600); // a leftover partial file keeps its mode through open
    await file.writeFile(text);
  } finally {
    await file.close();
  }
  await rename(partial, path);
}
