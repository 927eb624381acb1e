import type { ServiceDefinition } from "@corral/shared";
import { startSolverService } from "./service.js";

/** The solver service as a process runs it: alone (src/index.ts) or beside others (the launcher's shared process). */
export const serviceProcess: ServiceDefinition = {
  name: "solver",
  start: ({ nc, log, metrics }) => startSolverService({ nc, log, metrics }),
};
