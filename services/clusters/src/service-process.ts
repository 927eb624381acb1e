import type { ServiceDefinition } from "@corral/shared";
import { startClustersService } from "./service.js";

/** The clusters service as a process runs it: alone (src/index.ts) or beside others (the launcher's shared process). */
export const serviceProcess: ServiceDefinition = {
  name: "clusters",
  start: ({ nc, log, metrics }) => startClustersService({ nc, log, metrics }),
};
