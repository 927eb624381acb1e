import type { ServiceDefinition } from "@corral/shared";
import { startAuthService } from "./service.js";

/** The auth service as a process runs it: alone (src/index.ts) or beside others (the launcher's shared process). */
export const serviceProcess: ServiceDefinition = {
  name: "auth",
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
};
