import type { ServiceDefinition } from "@corral/shared";
import { startPluginsService } from "./service.js";

/** The plugins service as a process runs it: alone (src/index.ts) or beside others (the launcher's shared process). */
export const serviceProcess: ServiceDefinition = {
  name: "plugins",
  start: ({ nc, log, metrics }) => startPluginsService({ nc, log, metrics }),
};
