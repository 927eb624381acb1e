import { runServiceProcess } from "@corral/shared";
import { startPluginsService } from "./service.js";

await runServiceProcess({
  name: "plugins",
  env: process.env,
  exit: process.exit,
  start: ({ nc, log, metrics }) => startPluginsService({ nc, log, metrics }),
});
