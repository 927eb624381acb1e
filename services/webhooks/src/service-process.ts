import type { ServiceDefinition } from "@corral/shared";
import { parseAllowedNetworks } from "./domain/address-policy.js";
import { parseRetryDelays } from "./domain/retry-schedule.js";
import { startWebhooksService } from "./service.js";

/** The webhooks service as a process runs it: alone (src/index.ts) or beside others (the launcher's shared process). */
export const serviceProcess: ServiceDefinition = {
  name: "webhooks",
  start: ({ nc, log, config, metrics }) =>
    startWebhooksService({
      nc,
      log,
      metrics,
      allowedNetworks: parseAllowedNetworks(config.get("webhooks.allowedNetworks")),
      retryDelaysMs: parseRetryDelays(config.get("webhooks.retryDelaysMs")),
      attemptTimeoutMs: config.get("webhooks.attemptTimeoutMs"),
      leaseMs: config.get("webhooks.leaseMs"),
    }),
};
