import { runServiceProcess } from "@corral/shared";
import { parseAllowedNetworks } from "./domain/address-policy.js";
import { parseRetryDelays } from "./domain/retry-schedule.js";
import { startWebhooksService } from "./service.js";

await runServiceProcess({
  name: "webhooks",
  env: process.env,
  exit: process.exit,
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
});
