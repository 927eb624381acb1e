import { PROVISIONER_INBOX_PREFIX } from "@corral/contracts";
import { runServiceProcess } from "@corral/shared";
import { loadProvisionerConfig } from "./config.js";
import type { Plugin } from "./plugins/types.js";
import { defaultProvisionerId, startProvisioner } from "./provisioner.js";

export interface ProvisionerProcessOptions {
  /** The plugins to carry instead of the bundled ones (a test's recording plugins). @default the bundled plugins */
  plugins?: Plugin[];
}

/**
 * A provisioner process: its configuration from the environment (config.ts), its NATS connection as the
 * provisioner user, and a clean stop on SIGTERM (runServiceProcess). The entry of `provisioner/src/index.ts`.
 */
export async function runProvisionerProcess(options: ProvisionerProcessOptions = {}): Promise<void> {
  const config = loadProvisionerConfig(process.env);
  const id = config.id ?? defaultProvisionerId();
  await runServiceProcess({
    name: "provisioner",
    connectionName: `corral-provisioner-${id}`,
    // The provisioner NATS user may only subscribe under this prefix (deploy/src/bus-permissions.ts).
    inboxPrefix: PROVISIONER_INBOX_PREFIX,
    env: process.env,
    exit: process.exit,
    start: ({ nc, log, metrics }) =>
      startProvisioner({
        nc,
        log,
        id,
        host: config.host,
        capacity: config.capacity,
        workDir: config.workDir,
        stopTimeoutMs: config.stopTimeoutMs,
        maxSshConnections: config.maxSshConnections,
        simSecured: config.simSecured,
        ...(options.plugins ? { plugins: options.plugins } : {}),
        pluginModules: config.pluginModules,
        healthIntervalMs: config.healthIntervalMs,
        env: process.env,
        metrics,
      }),
  });
}
