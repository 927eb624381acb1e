import type { ServiceDefinition } from "@corral/shared";
import { startTenancyService } from "./service.js";

/** The tenancy service as a process runs it: alone (src/index.ts) or beside others (the launcher's shared process). */
export const serviceProcess: ServiceDefinition = {
  name: "tenancy",
  start: ({ nc, log, config, metrics }) =>
    startTenancyService({
      nc,
      log,
      superadminWorkers: config.get("tenancy.superadmin.workers"),
      takeoverAfterMs: config.get("tenancy.takeoverAfterMs"),
      metrics,
    }),
};
