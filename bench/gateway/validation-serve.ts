/**
 * One arm of validation-before-after.ts: Corral as `npm start` runs it, launched from the tree this file is in (the
 * current one, or an earlier revision's copy), with what the measured requests read: the `bench` providers (read
 * path) and a tenant whose `sim` catalog a dry-run create solves and plans (create path). Prints one line
 * `READY <json>` (base URL, the create's tenant, process ids) and serves until its standard input closes.
 *
 * Run by validation-before-after.ts: node --import=tsx bench/gateway/validation-serve.ts (cwd: the tree).
 */
import { createClusterCatalog } from "../../test/helpers/cluster-fixture.js";
import { createProviders, IDENTITY } from "./bench-providers.js";
import { launchCorral } from "./launched-corral.js";

/** The local provisioner registers its plugin types a moment after start: wait for `sim` and `shell`. */
async function pluginTypesRegistered(baseUrl: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answers = await Promise.all(
      ["providertypes/sim", "automatortypes/shell"].map(async (type) => (await fetch(`${baseUrl}/plugins/${type}`, { headers: IDENTITY })).status),
    );
    if (answers.every((status) => status === 200)) return;
    if (Date.now() > deadline) throw new Error(`the sim and shell plugin types are not registered after 60 s (${answers.join(", ")})`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

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
