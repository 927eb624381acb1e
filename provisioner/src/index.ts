import { PROVISIONER_INBOX_PREFIX } from "@corral/contracts";
import { runServiceProcess } from "@corral/shared";
import { loadProvisionerConfig } from "./config.js";
import { defaultProvisionerId, startProvisioner } from "./provisioner.js";

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
      metrics,
    }),
});
