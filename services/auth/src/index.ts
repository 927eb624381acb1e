import { runServiceProcess } from "@corral/shared";
import { startAuthService } from "./service.js";

await runServiceProcess({
  name: "auth",
  env: process.env,
  exit: process.exit,
  start: async ({ nc, log, config, metrics }) => {
    if (!config.get("security.enabled")) {
      // The launcher restarts services that exit, so this stays up (idle, on its NATS connection) until stopped.
      log.info("security is disabled (security.enabled=false); the token server is not started");
      return { stop: async () => {} };
    }
    const service = await startAuthService({ nc, log, config, metrics });
    log.info("token server listening", { url: service.tokenUrl });
    return service;
  },
});
