import { connectNats, createLogger, loadConfig, type LogLevel } from "@corral/shared";
import { startMetricsService } from "./service.js";

const config = loadConfig({ env: process.env });
const log = createLogger({ service: "metrics" }, { level: config.get("log.level") as LogLevel });
const nc = await connectNats({ url: config.get("nats.url"), name: "corral-metrics", log });
const service = await startMetricsService({ nc, redis: config.get("redis.url"), log });
log.info("metrics service started", { nats: config.get("nats.url") });

const shutdown = async (signal: string) => {
  log.info("stopping", { signal });
  await service.stop();
  await nc.drain().catch(() => {});
  process.exit(0);
};
process.once("SIGTERM", () => void shutdown("SIGTERM"));
process.once("SIGINT", () => void shutdown("SIGINT"));
