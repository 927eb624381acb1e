/**
 * `npm run quickstart`: against a running Corral (`npm start`), creates a real three-node cluster of Docker
 * containers from deploy/examples/docker-demo (kv, app, web), or, where Docker is not available, a simulated one
 * from deploy/examples/quickstart-catalog.json, and shows how to reach it. Every step is a plain REST call that
 * docs/api.md describes.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { NodeView } from "@corral/contracts";
import { which } from "./binaries.js";
import { ensureDocker, isDockerAvailable } from "./docker.js";
import { ensureNodeImage } from "./node-image.js";
import { repoRoot } from "./paths.js";
import { restClient } from "./rest-client.js";

const api = process.env["CORRAL_API"] ?? `http://localhost:${process.env["CORRAL_SERVER_PORT"] ?? "55054"}/v2`;
const corral = restClient(api, { "Service-UserID": "admin", "Service-TenantID": "superadmin" });
const say = (line: string) => console.log(`[quickstart] ${line}`);

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(500);
  }
}

/** A node property that is text (hostname), or "". */
const textProperty = (node: NodeView, name: string): string => {
  const value = node.properties[name];
  return typeof value === "string" ? value : "";
};

/** The address a node is reached at from this machine (its `access_v4`), or "". */
const accessAddress = (node: NodeView): string => {
  const addresses = node.properties["ipaddresses"];
  const address = addresses && typeof addresses === "object" && !Array.isArray(addresses) ? addresses["access_v4"] : undefined;
  return typeof address === "string" ? address : "";
};

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
    await corral.call("plugins.getType", { params: { type: "providertypes", plugin: providerType } });
    return true;
  }, 60_000);

  const demoDir = join(repoRoot, "deploy", "examples", docker ? "docker-demo" : "");
  const catalogFile = docker ? join(demoDir, "catalog.json") : join(repoRoot, "deploy", "examples", "quickstart-catalog.json");
  await corral.call("tenancy.import", { body: JSON.parse(await readFile(catalogFile, "utf8")) });
  say(`imported ${catalogFile}`);
  if (docker) {
    const script = { type: "automatortypes", plugin: "shell", resourceType: "scripts", resource: "corral-demo.sh" };
    const bytes = new Uint8Array(await readFile(join(demoDir, "corral-demo.sh")));
    const { version } = await corral.call("plugins.upload", { params: script, bytes });
    await corral.call("plugins.stage", { params: { ...script, version: String(version) } });
    await corral.call("plugins.sync");
    say(`uploaded, staged and synced corral-demo.sh (version ${version}); BOOTSTRAP copies it to every node`);
  }

  const template = docker ? "demo3" : "webstack";
  const created = await corral.call("clusters.create", { body: { name: "quickstart", clusterTemplate: template, numMachines: 3 } });
  if (!("id" in created)) throw new Error("POST /clusters answered without a cluster id");
  const { id } = created;
  say(`creating cluster ${id} (template ${template}, 3 machines)`);
  let last = "";
  await waitFor(`cluster ${id} to settle`, async () => {
    const s = await corral.call("clusters.status", { params: { id } });
    const line = `${s.status} ${s.stepscompleted}/${s.stepstotal}`;
    if (line !== last) say(line);
    last = line;
    if (s.status !== "pending") {
      if (s.status !== "active") throw new Error(`cluster ${id} ended ${s.status}: see GET /v2/clusters/${id}`);
      return true;
    }
    return false;
  }, 600_000);

  const cluster = await corral.call("clusters.get", { params: { id } });
  say(`cluster ${id} is active:`);
  for (const node of cluster.nodes) {
    say(`  ${textProperty(node, "hostname").padEnd(32)} ${accessAddress(node).padEnd(16)} ${node.services.join(", ")}`);
  }
  if (docker) {
    const web = cluster.nodes.find((n) => n.services.includes("web"));
    say(`containers:  docker ps --filter label=corral.cluster=${id}`);
    say(`a shell:     docker exec -it $(docker ps -q --filter label=corral.cluster=${id} | head -1) bash`);
    if (web) say(`the web app: curl http://${accessAddress(web)}/`);
  }
  say(`details:     curl -H 'Service-UserID: admin' -H 'Service-TenantID: superadmin' ${api}/clusters/${id}`);
  say(`delete it:   curl -X DELETE -H 'Service-UserID: admin' -H 'Service-TenantID: superadmin' ${api}/clusters/${id}`);
}

main().catch((err: unknown) => {
  console.error(`[quickstart] ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
