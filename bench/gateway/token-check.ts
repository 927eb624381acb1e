/**
 * Cost of the gateway's per-request token check with security on, for a token whose login named no tenant and
 * one bound to its tenant (uid compared with the tenant directory's cached record):
 * - in process: authenticate + resolveIdentity + identify, warm caches, ns per request (median of interleaved
 *   rounds), and resolveIdentity + identify alone (the part the tenant binding adds to);
 * - through HTTP: wrk on GET /v2/providers/bench (gateway -> NATS -> tenancy), requests per second.
 * Writes bench/results/gateway-token-check.json.
 * Run: node --import=tsx bench/gateway/token-check.ts
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@corral/shared";
import { openGatewaySecurity, openTenantDirectory, resolveIdentity } from "@corral/gateway/testing";
import { api } from "../../test/helpers/api.js";
import { registerFixturePluginTypes } from "../../test/helpers/registry.js";
import { startSystem } from "../../test/helpers/system.js";
import { bearer, tokenFor } from "../../test/helpers/tokens.js";
import { ensureWrk, runWrk, type LoadResult } from "./wrk.js";
import { median } from "../stats.js";

const DURATION_S = Number(process.env["BENCH_DURATION_S"] ?? 5);
const CONNECTIONS = Number(process.env["BENCH_CONNECTIONS"] ?? 64);
const CALLS = Number(process.env["BENCH_CALLS"] ?? 100_000);
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 7);


const dir = mkdtempSync(join(tmpdir(), "corral-bench-token-"));
const realmfile = join(dir, "realm.properties");
writeFileSync(realmfile, "root: rootpw,superadmin\nalice: alicepw,admin\n");
const wrk = ensureWrk();
const sys = await startSystem({ security: { config: { "security.authentication.basic.realmfile": realmfile } } });
try {
  await registerFixturePluginTypes(sys.nc);
  const root = bearer(await tokenFor(sys.tokenUrl!, "root", "rootpw"));
  const asRoot = { user: "root", tenant: "superadmin", headers: root };
  if ((await api(sys.baseUrl, "POST", "/tenants", { ...asRoot, body: { tenant: { name: "acme", workers: 0 } } })).status !== 200) {
    throw new Error("creating tenant acme failed");
  }
  const tokens = {
    unbound: await tokenFor(sys.tokenUrl!, "alice", "alicepw"),
    bound: await tokenFor(sys.tokenUrl!, "alice", "alicepw", "acme"),
  };
  const identity = { "Service-UserID": "alice", "Service-TenantID": "acme" };
  const created = await api(sys.baseUrl, "POST", "/providers", {
    user: "alice",
    tenant: "acme",
    headers: bearer(tokens.bound),
    body: { name: "bench", providertype: "digitalocean", provisioner: { region: "ams3" } },
  });
  if (created.status !== 200) throw new Error(`setup failed: ${created.text}`);

  const security = await openGatewaySecurity({ nc: sys.nc, log: silentLogger, redisUrl: sys.redis!.url, tokenUrl: sys.tokenUrl! });
  const directory = await openTenantDirectory(sys.nc, silentLogger);
  const checkOnce = async (header: string) => {
    const auth = await security.authenticate(header);
    if (!auth.ok) throw new Error(auth.denial.message);
    return auth.session.identify(await resolveIdentity("alice", "acme", directory), directory);
  };
  const nsPerCheck: Record<keyof typeof tokens, number[]> = { unbound: [], bound: [] };
  const nsPerIdentify: Record<keyof typeof tokens, number[]> = { unbound: [], bound: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of Object.keys(tokens) as Array<keyof typeof tokens>) {
      const header = `Bearer ${tokens[kind]}`;
      await checkOnce(header);
      let start = process.hrtime.bigint();
      for (let i = 0; i < CALLS; i++) await checkOnce(header);
      nsPerCheck[kind].push(Number(process.hrtime.bigint() - start) / CALLS);
      // The part this check added to: the tenant lookup and the session's identify, the token already verified.
      const auth = await security.authenticate(header);
      if (!auth.ok) throw new Error(auth.denial.message);
      start = process.hrtime.bigint();
      for (let i = 0; i < CALLS; i++) await auth.session.identify(await resolveIdentity("alice", "acme", directory), directory);
      nsPerIdentify[kind].push(Number(process.hrtime.bigint() - start) / CALLS);
    }
  }
  directory.stop();
  await security.stop();

  const url = `${sys.baseUrl}/providers/bench`;
  const http = { unbound: [] as LoadResult[], bound: [] as LoadResult[] };
  for (let round = 0; round < 2; round++) {
    for (const kind of Object.keys(tokens) as Array<keyof typeof tokens>) {
      http[kind].push(
        await runWrk(wrk, url, { ...identity, authorization: `Bearer ${tokens[kind]}` }, { connections: CONNECTIONS, durationSeconds: DURATION_S }),
      );
    }
  }
  const results = {
    date: new Date().toISOString(),
    machine: "2 cores shared with other work (client, gateway, tenancy and nats-server in one process tree)",
    inProcess: {
      callsPerRound: CALLS,
      rounds: ROUNDS,
      medianNsPerCheck: { unbound: Math.round(median(nsPerCheck.unbound)), bound: Math.round(median(nsPerCheck.bound)) },
      nsPerCheck: { unbound: nsPerCheck.unbound.map(Math.round), bound: nsPerCheck.bound.map(Math.round) },
      medianNsPerIdentify: { unbound: Math.round(median(nsPerIdentify.unbound)), bound: Math.round(median(nsPerIdentify.bound)) },
    },
    getProviderWithToken: { connections: CONNECTIONS, durationSeconds: DURATION_S, ...http },
  };
  mkdirSync(new URL("../results/", import.meta.url), { recursive: true });
  writeFileSync(new URL("../results/gateway-token-check.json", import.meta.url), JSON.stringify(results, null, 2) + "\n");
  console.log(JSON.stringify(results, null, 2));
} finally {
  await sys.stop();
  rmSync(dir, { recursive: true, force: true });
}
