import { runServiceProcess } from "@corral/shared";
import { startTenancyService } from "./service.js";

await runServiceProcess({
  name: "tenancy",
  env: process.env,
  exit: process.exit,
  start: ({ nc, log, config, metrics }) =>
    startTenancyService({
      nc,
      log,
      superadminWorkers: config.get("tenancy.superadmin.workers"),
      takeoverAfterMs: config.get("tenancy.takeoverAfterMs"),
      metrics,
    }),
});
