import { connectNats, createLogger, loadConfig, type LogLevel } from "@corral/shared";
import { startTenancyService } from "./service.js";

const config = loadConfig({ env: process.env });
const log = createLogger({ service: "tenancy" }, { level: config.get("log.level") as LogLevel });
const nc = await connectNats({ url: config.get("nats.url"), name: "corral-tenancy", log });
const service = await startTenancyService({ nc, log, superadminWorkers: config.get("tenancy.superadmin.workers") });
log.info("tenancy service started", { nats: config.get("nats.url") });

const shutdown = async (signal: string) => {
  log.info("stopping", { signal });
  await service.stop();
  await nc.drain().catch(() => {});
  process.exit(0);
};
process.once("SIGTERM", () => void shutdown("SIGTERM"));
process.once("SIGINT", () => void shutdown("SIGINT"));
