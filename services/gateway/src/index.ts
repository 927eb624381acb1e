import { connectNats, createLogger, loadConfig, type LogLevel } from "@corral/shared";
import { startGateway } from "./service.js";

const config = loadConfig({ env: process.env });
const log = createLogger({ service: "gateway" }, { level: config.get("log.level") as LogLevel });
const nc = await connectNats({ url: config.get("nats.url"), name: "corral-gateway", log });
const gateway = await startGateway({
  nc,
  log,
  host: config.get("server.host"),
  port: config.get("server.port"),
  maxRequestBytes: config.get("server.maxRequestBytes"),
  requestTimeoutMs: config.get("server.requestTimeoutMs"),
  maxUploadBytes: config.get("server.maxUploadBytes"),
});
log.info("gateway listening", { port: gateway.port, api: `http://localhost:${gateway.port}/v2` });

const shutdown = async (signal: string) => {
  log.info("stopping", { signal });
  await gateway.stop();
  await nc.drain().catch(() => {});
  process.exit(0);
};
process.once("SIGTERM", () => void shutdown("SIGTERM"));
process.once("SIGINT", () => void shutdown("SIGINT"));
