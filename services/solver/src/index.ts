import { runServiceProcess } from "@corral/shared";
import { startSolverService } from "./service.js";

await runServiceProcess({
  name: "solver",
  env: process.env,
  exit: process.exit,
  start: ({ nc, log, metrics }) => startSolverService({ nc, log, metrics }),
});
