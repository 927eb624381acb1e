/**
 * One arm of validation-before-after.ts: Corral as `npm start` runs it, launched from the tree this file is in (the
 * current one, or an earlier revision's copy), with what the measured requests read: the `bench` providers (read
 * path) and a tenant whose `sim` catalog a dry-run create solves and plans (create path). Prints one line
 * `READY <json>` (base URL, the create's tenant, process ids) and serves until its standard input closes.
 *
 * Run by validation-before-after.ts: node --import=tsx bench/gateway/validation-serve.ts (cwd: the tree).
 */
import { createClusterCatalog } from "../../test/helpers/cluster-fixture.js";
import { createProviders, pluginTypesRegistered } from "./bench-providers.js";
import { launchCorral } from "./launched-corral.js";

const corral = await launchCorral();
try {
  await createProviders(corral);
  await pluginTypesRegistered(corral.baseUrl);
  const catalog = await createClusterCatalog(corral.baseUrl, {
    tenant: "bench-create",
    workers: 0,
    services: [{ name: "base", actions: { install: "true" } }],
  });
  console.log(`READY ${JSON.stringify({ baseUrl: corral.baseUrl, createTenant: catalog.tenant, template: catalog.template, pids: corral.pids() })}`);
  process.stdin.resume();
  await new Promise<void>((resolve) => process.stdin.on("close", resolve).on("end", resolve));
} finally {
  await corral.stop();
}
