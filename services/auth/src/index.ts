import { connectNats, createLogger, loadConfig, type LogLevel } from "@corral/shared";
import { startAuthService } from "./service.js";

const config = loadConfig({ env: process.env });
const log = createLogger({ service: "auth" }, { level: config.get("log.level") as LogLevel });

if (!config.get("security.enabled")) {
  // The launcher restarts services that exit, so stay up, idle, until told to stop.
  log.info("security is disabled (security.enabled=false); the token server is not started");
  const idle = setInterval(() => {}, 1 << 30);
  const stop = (signal: string) => {
    log.info("stopping", { signal });
    clearInterval(idle);
    process.exit(0);
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
} else {
  const nc = await connectNats({ url: config.get("nats.url"), name: "corral-auth", log });
  const service = await startAuthService({ nc, log, config });
  log.info("token server listening", { url: service.tokenUrl });

  const shutdown = async (signal: string) => {
    log.info("stopping", { signal });
    await service.stop();
    await nc.drain().catch(() => {});
    process.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
}
