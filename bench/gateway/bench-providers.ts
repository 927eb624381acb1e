/** The providers the gateway benchmarks read: `bench` and 19 more (a list of 20), created through the real API. */
import { connectNats } from "@corral/shared";
import { registerFixturePluginTypes } from "../../test/helpers/registry.js";
import type { LaunchedCorral } from "./launched-corral.js";

/** The superadmin's identity headers. */
export const IDENTITY = { "Service-UserID": "admin", "Service-TenantID": "superadmin" };
export const LISTED_PROVIDERS = 20;

export async function createProviders(corral: LaunchedCorral): Promise<void> {
  const nc = await connectNats({ url: corral.natsUrl, name: "bench-setup" });
  try {
    await registerFixturePluginTypes(nc);
  } finally {
    await nc.close();
  }
  const names = ["bench", ...Array.from({ length: LISTED_PROVIDERS - 1 }, (_, i) => `bench-${String(i + 1).padStart(2, "0")}`)];
  for (const name of names) {
    const res = await fetch(`${corral.baseUrl}/providers`, {
      method: "POST",
      headers: { ...IDENTITY, "content-type": "application/json" },
      body: JSON.stringify({ name, providertype: "digitalocean", provisioner: { region: "ams3" } }),
    });
    if (res.status !== 200) throw new Error(`creating provider ${name} failed: ${res.status} ${await res.text()}`);
  }
}

/** The local provisioner registers its plugin types a moment after start: waits for `sim` and `shell`. */
export async function pluginTypesRegistered(baseUrl: string): Promise<void> {
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
