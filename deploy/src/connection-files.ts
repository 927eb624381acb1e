import { open, rename } from "node:fs/promises";
import { join } from "node:path";

/** How one kind of process reaches the bus: what its connection file holds. */
export interface ConnectionSettings {
  natsUrl: string;
  /** Absent for provisioners, which do not use Redis. */
  redisUrl?: string;
}

/** Names of the connection files in the data dir. */
export const CONNECTION_FILES = { services: "services.properties", provisioner: "provisioner.properties" } as const;

/**
 * Writes `<dataDir>/services.properties` and `<dataDir>/provisioner.properties` (mode 0600): config files
 * (`CORRAL_CONFIG=<file>`) with the URLs, credentials included, of this start's servers, so a service or
 * provisioner an operator starts by hand connects like the launcher's own. Rewritten at every start (a port may
 * change); each replaces the old one whole, so a reader never sees half a file.
 */
export async function writeConnectionFiles(
  dataDir: string,
  settings: { services: ConnectionSettings; provisioner: ConnectionSettings },
): Promise<{ services: string; provisioner: string }> {
  const services = join(dataDir, CONNECTION_FILES.services);
  const provisioner = join(dataDir, CONNECTION_FILES.provisioner);
  await writePrivately(services, properties("services", settings.services));
  await writePrivately(provisioner, properties("a provisioner", settings.provisioner));
  return { services, provisioner };
}

function properties(who: string, settings: ConnectionSettings): string {
  return [
    `# How ${who} reaches this installation's NATS${settings.redisUrl ? " and Redis" : ""}; written by npm start at every start.`,
    `# Use: CORRAL_CONFIG=<this file> node --import=tsx <entry>. Secret: keep it mode 0600.`,
    `nats.url=${settings.natsUrl}`,
    ...(settings.redisUrl ? [`redis.url=${settings.redisUrl}`] : []),
    "",
  ].join("\n");
}

async function writePrivately(path: string, text: string): Promise<void> {
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
