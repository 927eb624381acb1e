import type { ServiceDefinition } from "@corral/shared";
import { startMetricsService } from "./service.js";

/** The metrics service as a process runs it: alone (src/index.ts) or beside others (the launcher's shared process). */
export const serviceProcess: ServiceDefinition = {
  name: "metrics",
  start: ({ nc, log, config, metrics }) => startMetricsService({ nc, redis: config.get("redis.url"), log, metrics, audit: config.get("audit.enabled") }),
};
