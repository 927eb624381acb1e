import { connectNats, createLogger } from "@corral/shared";
import { loadProvisionerConfig } from "./config.js";
import { defaultProvisionerId, startProvisioner } from "./provisioner.js";

const config = loadProvisionerConfig(process.env);
const id = config.id ?? defaultProvisionerId();
const log = createLogger({ service: "provisioner" }, { level: config.logLevel });
const nc = await connectNats({ url: config.natsUrl, name: `corral-provisioner-${id}`, log });
const provisioner = await startProvisioner({
  nc,
  log,
  id,
  host: config.host,
  capacity: config.capacity,
  workDir: config.workDir,
  stopTimeoutMs: config.stopTimeoutMs,
});
log.info("provisioner running", { id, nats: config.natsUrl, capacity: config.capacity, workDir: config.workDir });

const shutdown = async (signal: string) => {
  log.info("stopping", { signal });
  await provisioner.stop();
  await nc.drain().catch(() => {});
  process.exit(0);
};
process.once("SIGTERM", () => void shutdown("SIGTERM"));
process.once("SIGINT", () => void shutdown("SIGINT"));
