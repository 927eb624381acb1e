import { connectNats, createLogger, loadConfig, type LogLevel } from "@corral/shared";
import { tokenServerUrl } from "@corral/auth/internal";
import { openGatewaySecurity } from "./security.js";
import { startGateway } from "./service.js";

const config = loadConfig({ env: process.env });
const log = createLogger({ service: "gateway" }, { level: config.get("log.level") as LogLevel });
const nc = await connectNats({ url: config.get("nats.url"), name: "corral-gateway", log });
const security = config.get("security.enabled")
  ? await openGatewaySecurity({ nc, log, redisUrl: config.get("redis.url"), tokenUrl: tokenServerUrl(config), realm: config.get("security.realm") })
  : undefined;
const gateway = await startGateway({
  nc,
  log,
  security,
  host: config.get("server.host"),
  port: config.get("server.port"),
  maxRequestBytes: config.get("server.maxRequestBytes"),
  requestTimeoutMs: config.get("server.requestTimeoutMs"),
  maxUploadBytes: config.get("server.maxUploadBytes"),
});
log.info("gateway listening", { port: gateway.port, api: `http://localhost:${gateway.port}/v2`, security: security !== undefined });

const shutdown = async (signal: string) => {
  log.info("stopping", { signal });
  await gateway.stop();
  await security?.stop();
  await nc.drain().catch(() => {});
  process.exit(0);
};
process.once("SIGTERM", () => void shutdown("SIGTERM"));
process.once("SIGINT", () => void shutdown("SIGINT"));
