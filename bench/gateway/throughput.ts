/**
 * REST throughput through gateway -> NATS -> tenancy, measured with wrk on loopback (bounded: a few seconds
 * per case). Writes bench/results/gateway-throughput.json.
 * Run: node --import=tsx bench/gateway/throughput.ts
 */
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { mkdirSync, writeFileSync } from "node:fs";
import { api, SUPERADMIN } from "../../test/helpers/api.js";
import { registerFixturePluginTypes } from "../../test/helpers/registry.js";
import { startSystem } from "../../test/helpers/system.js";

const DURATION_S = Number(process.env["BENCH_DURATION_S"] ?? 5);
const CONNECTIONS = Number(process.env["BENCH_CONNECTIONS"] ?? 64);

function ensureWrk(): string {
  const found = spawnSync("which", ["wrk"], { encoding: "utf8" }).stdout.trim();
  if (found) return found;
  execFileSync("apt-get", ["install", "-y", "wrk"], { stdio: "ignore" });
  return "wrk";
}

/** Async on purpose: the servers run in this process, so blocking the event loop would stall them. */
async function runWrk(wrk: string, url: string, headers: Record<string, string>) {
  const args = ["-t2", `-c${CONNECTIONS}`, `-d${DURATION_S}s`, "--latency"];
  for (const [k, v] of Object.entries(headers)) args.push("-H", `${k}: ${v}`);
  const { stdout: out } = await promisify(execFile)(wrk, [...args, url], { encoding: "utf8" });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
  const p50 = /50%\s+([\d.]+\w+)/.exec(out)?.[1];
  const p99 = /99%\s+([\d.]+\w+)/.exec(out)?.[1];
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  return { requestsPerSecond: Math.round(rps), latencyP50: p50, latencyP99: p99, non2xx };
}

const wrk = ensureWrk();
const sys = await startSystem();
try {
  await registerFixturePluginTypes(sys.nc);
  const created = await api(sys.baseUrl, "POST", "/providers", {
    ...SUPERADMIN,
    body: { name: "bench", providertype: "rackspace", provisioner: { region: "dfw" } },
  });
  if (created.status !== 200) throw new Error(`setup failed: ${created.text}`);
  const identity = { "Service-UserID": "admin", "Service-TenantID": "superadmin" };
  const results = {
    date: new Date().toISOString(),
    machine: "2 cores (client, gateway, tenancy and nats-server share them)",
    connections: CONNECTIONS,
    durationSeconds: DURATION_S,
    status: await runWrk(wrk, `${sys.baseUrl}/status`, {}),
    getProvider: await runWrk(wrk, `${sys.baseUrl}/providers/bench`, identity),
    listProviders: await runWrk(wrk, `${sys.baseUrl}/providers`, identity),
    unknownTenant401: await runWrk(wrk, `${sys.baseUrl}/providers/bench`, { ...identity, "Service-TenantID": "nobody" }),
  };
  mkdirSync(new URL("../results/", import.meta.url), { recursive: true });
  writeFileSync(new URL("../results/gateway-throughput.json", import.meta.url), JSON.stringify(results, null, 2) + "\n");
  console.log(JSON.stringify(results, null, 2));
} finally {
  await sys.stop();
}
