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
