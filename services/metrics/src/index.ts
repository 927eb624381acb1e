import { runServiceProcess } from "@corral/shared";
import { startMetricsService } from "./service.js";

await runServiceProcess({
  name: "metrics",
  env: process.env,
  exit: process.exit,
  start: ({ nc, log, config, metrics }) => startMetricsService({ nc, redis: config.get("redis.url"), log, metrics, audit: config.get("audit.enabled") }),
});
