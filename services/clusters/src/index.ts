import { runServiceProcess } from "@corral/shared";
import { startClustersService } from "./service.js";

await runServiceProcess({
  name: "clusters",
  env: process.env,
  exit: process.exit,
  start: ({ nc, log, metrics }) => startClustersService({ nc, log, metrics }),
});
