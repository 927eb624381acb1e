/**
 * `npm run quickstart`: against a running Corral (`npm start`), creates a real three-node cluster of Docker
 * containers from deploy/examples/docker-demo (kv, app, web), or, where Docker is not available, a simulated one
 * from deploy/examples/quickstart-catalog.json, and shows how to reach it. Every step is a plain REST call the
 * README lists too.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { which } from "./binaries.js";
import { ensureDocker, isDockerAvailable } from "./docker.js";
import { ensureNodeImage } from "./node-image.js";
import { repoRoot } from "./paths.js";

const api = process.env["CORRAL_API"] ?? `http://localhost:${process.env["CORRAL_SERVER_PORT"] ?? "55054"}/v2`;
const headers = { "Service-UserID": "admin", "Service-TenantID": "superadmin" };
const say = (line: string) => console.log(`[quickstart] ${line}`);

async function call<T = unknown>(method: string, path: string, body?: unknown, raw?: Buffer): Promise<T> {
  const res = await fetch(api + path, {
    method,
    headers: { ...headers, ...(raw ? { "Content-Type": "application/octet-stream" } : {}) },
    ...(raw ? { body: new Uint8Array(raw) } : body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(500);
  }
}

interface NodeView {
  id: string;
  services: string[];
  properties: { hostname: string; ipaddresses?: Record<string, string> };
}

async function main(): Promise<void> {
  await waitFor(`the API at ${api} (is npm start running?)`, async () => (await fetch(`${api}/status`)).ok, 30_000);
  // Docker installed but not running: start it (npm start does not); without Docker at all, fall back to sim.
  if (!(await isDockerAvailable()) && (await which("dockerd"))) await ensureDocker({ log: say }).catch(() => undefined);
  const docker = await isDockerAvailable();
  const providerType = docker ? "docker" : "sim";
  if (docker) {
    say("Docker is available: the cluster will be three real containers");
    await ensureNodeImage({ log: (line) => say(line) });
  } else {
    say("Docker is not available on this machine (no answer on its socket): falling back to the simulated provider sim");
  }
  await waitFor(`provider type ${providerType} (the local provisioner registers it)`, async () => {
    await call("GET", `/plugins/providertypes/${providerType}`);
    return true;
  }, 60_000);

  const demoDir = join(repoRoot, "deploy", "examples", docker ? "docker-demo" : "");
  const catalogFile = docker ? join(demoDir, "catalog.json") : join(repoRoot, "deploy", "examples", "quickstart-catalog.json");
  await call("POST", "/import", JSON.parse(await readFile(catalogFile, "utf8")));
  say(`imported ${catalogFile}`);
  if (docker) {
    const script = "/plugins/automatortypes/shell/scripts/corral-demo.sh";
    const { version } = await call<{ version: number }>("POST", script, undefined, await readFile(join(demoDir, "corral-demo.sh")));
    await call("POST", `${script}/versions/${version}/stage`);
    await call("POST", "/plugins/sync");
    say(`uploaded, staged and synced corral-demo.sh (version ${version}); BOOTSTRAP copies it to every node`);
  }

  const template = docker ? "demo3" : "webstack";
  const { id } = await call<{ id: string }>("POST", "/clusters", { name: "quickstart", clusterTemplate: template, numMachines: 3 });
  say(`creating cluster ${id} (template ${template}, 3 machines)`);
  let last = "";
  await waitFor(`cluster ${id} to settle`, async () => {
    const s = await call<{ status: string; stepscompleted: number; stepstotal: number }>("GET", `/clusters/${id}/status`);
    const line = `${s.status} ${s.stepscompleted}/${s.stepstotal}`;
    if (line !== last) say(line);
    last = line;
    if (s.status !== "pending") {
      if (s.status !== "active") throw new Error(`cluster ${id} ended ${s.status}: see GET /v2/clusters/${id}`);
      return true;
    }
    return false;
  }, 600_000);

  const cluster = await call<{ nodes: NodeView[] }>("GET", `/clusters/${id}`);
  say(`cluster ${id} is active:`);
  for (const node of cluster.nodes) {
    say(`  ${node.properties.hostname.padEnd(32)} ${(node.properties.ipaddresses?.["access_v4"] ?? "").padEnd(16)} ${node.services.join(", ")}`);
  }
  if (docker) {
    const web = cluster.nodes.find((n) => n.services.includes("web"));
    say(`containers:  docker ps --filter label=corral.cluster=${id}`);
    say(`a shell:     docker exec -it $(docker ps -q --filter label=corral.cluster=${id} | head -1) bash`);
    if (web) say(`the web app: curl http://${web.properties.ipaddresses?.["access_v4"]}/`);
  }
  say(`details:     curl -H 'Service-UserID: admin' -H 'Service-TenantID: superadmin' ${api}/clusters/${id}`);
  say(`delete it:   curl -X DELETE -H 'Service-UserID: admin' -H 'Service-TenantID: superadmin' ${api}/clusters/${id}`);
}

main().catch((err: unknown) => {
  console.error(`[quickstart] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
