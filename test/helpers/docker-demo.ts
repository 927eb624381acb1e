/**
 * The Docker demo of deploy/examples/docker-demo (kv, app, web, monitor run by corral-demo.sh) for end-to-end
 * tests, crash tests and benchmarks: a tenant with the demo catalog on its own Docker network, the script
 * uploaded, staged and synced, and views of a cluster's containers. Containers the `docker` provider makes carry
 * `corral.tenant`, `corral.cluster` and `corral.node`; {@link removeTenantContainers} removes a test tenant's.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import type { NatsConnection } from "@nats-io/transport-node";
import { repoRoot } from "@corral/deploy";
import { resourceDir } from "@corral/provisioner";
import { api, type ApiResponse, type Caller } from "./api.js";
import { show } from "./assertions.js";
import { createWorkerTenant, type E2eTenant } from "./clusters.js";
import { eventually } from "./eventually.js";
import { pluginClient } from "./plugin-rest.js";

const run = promisify(execFile);
const DEMO_DIR = join(repoRoot, "deploy", "examples", "docker-demo");
export const DEMO_SCRIPT = join(DEMO_DIR, "corral-demo.sh");
export const DEMO_SERVICES = ["kv", "app", "web"] as const;

export interface DemoTenant extends E2eTenant {
  /** The Docker network the tenant's provider puts containers on. */
  network: string;
}

export interface DemoTenantOptions {
  /** Worker loops of the tenant. @default 6 */
  workers?: number;
  /** Replaces the demo catalog's providers (e.g. a `hostpool`); hardware and image types map them too. */
  provider?: { name: string; providertype: string; provisioner: Record<string, string> };
  /** Extra services added to the catalog (and to the template's compatibility list). */
  extraServices?: Array<Record<string, unknown>>;
  /** Provisioner work directories the synced script must reach before the tenant is used. */
  workDirs?: string[];
}

async function must(res: Promise<ApiResponse>, what: string): Promise<ApiResponse> {
  const r = await res;
  if (r.status !== 200) throw new Error(`${what}: ${show(r)}`);
  return r;
}

/** The demo catalog, its provider renamed and pointed at `network` (or replaced by `options.provider`). */
export async function demoCatalog(network: string, options: DemoTenantOptions = {}): Promise<Record<string, any[]>> {
  const catalog = JSON.parse(await readFile(join(DEMO_DIR, "catalog.json"), "utf8")) as Record<string, any[]>;
  const provider = options.provider ?? { name: "local-docker", providertype: "docker", provisioner: { network } };
  catalog["providers"] = [provider];
  for (const kind of ["hardwaretypes", "imagetypes"]) {
    for (const entity of catalog[kind]!) entity.providermap = { [provider.name]: entity.providermap["local-docker"] };
  }
  const template = catalog["clustertemplates"]![0];
  template.defaults.provider = provider.name;
  for (const extra of options.extraServices ?? []) {
    catalog["services"]!.push(extra);
    template.compatibility.services.push(extra["name"]);
  }
  return catalog;
}

/** A tenant with workers, the demo catalog and corral-demo.sh synced to the provisioners. */
export async function createDemoTenant(
  sys: { baseUrl: string; nc: NatsConnection },
  prefix: string,
  options: DemoTenantOptions = {},
): Promise<DemoTenant> {
  const tenant = await createWorkerTenant(sys.baseUrl, sys.nc, prefix, { workers: options.workers ?? 6 });
  const network = `corral-test-${tenant.name}`;
  await must(api(sys.baseUrl, "POST", "/import", { ...tenant.admin, body: await demoCatalog(network, options) }), "import demo catalog");
  await syncDemoScript(sys.baseUrl, tenant.admin, tenant.name, options.workDirs ?? []);
  return { ...tenant, network };
}

/** Uploads, stages and syncs corral-demo.sh; waits until every given work directory has it. */
export async function syncDemoScript(baseUrl: string, admin: Caller, tenant: string, workDirs: string[]): Promise<void> {
  const c = pluginClient(baseUrl, admin);
  const path = "/plugins/automatortypes/shell/scripts/corral-demo.sh";
  const script = await readFile(DEMO_SCRIPT, "utf8");
  const uploaded = await c.upload(path, script);
  if (uploaded.status !== 200) throw new Error(`upload corral-demo.sh: ${show(uploaded)}`);
  const { version } = JSON.parse(uploaded.text) as { version: number };
  await must(c.call("POST", `${path}/versions/${version}/stage`), "stage corral-demo.sh");
  await must(c.call("POST", "/plugins/sync"), "sync");
  for (const workDir of workDirs) {
    const installed = join(resourceDir(workDir, tenant, "automatortypes", "shell", "scripts"), "corral-demo.sh");
    await eventually(async () => (await readFile(installed, "utf8").catch(() => "")) === script, {
      what: `corral-demo.sh synced to ${workDir}`,
      timeoutMs: 15_000,
      intervalMs: 100,
    });
  }
}

/** `docker ...`, its stdout. */
export async function docker(args: string[]): Promise<string> {
  return (await run("docker", args, { maxBuffer: 16 << 20 })).stdout;
}

/** Ids of the containers labelled with `label=value` (running or not). */
export async function containersLabelled(label: string, value: string): Promise<string[]> {
  return (await docker(["ps", "-a", "-q", "--no-trunc", "--filter", `label=${label}=${value}`])).split("\n").filter(Boolean);
}

/** A shell command in a container; stdout, or throws with stderr on failure. */
export async function inContainer(id: string, command: string): Promise<string> {
  try {
    return (await run("docker", ["exec", id, "sh", "-c", command])).stdout;
  } catch (err) {
    const e = err as { stderr?: string; code?: number };
    throw new Error(`docker exec ${id.slice(0, 12)} ${command}: exit ${e.code}: ${e.stderr ?? ""}`);
  }
}

/** A node's container, by its tenant's and `corral.node` labels (exactly one expected). */
export async function nodeContainer(tenant: string, nodeId: string): Promise<string> {
  const ids = await tenantContainers(tenant, { "corral.node": nodeId });
  if (ids.length !== 1) throw new Error(`node ${nodeId} has ${ids.length} containers`);
  return ids[0]!;
}

/** Removes every container of a test tenant (and its network); for `after.always`. */
export async function removeTenantContainers(tenant: string, network?: string): Promise<void> {
  const ids = await tenantContainers(tenant);
  if (ids.length) await docker(["rm", "-f", "-v", ...ids]).catch(() => "");
  if (network) await docker(["network", "rm", network]).catch(() => "");
}

/**
 * Ids of a tenant's containers carrying every label given (running or not). Cluster and node ids repeat across
 * test systems sharing one Docker daemon, tenant names do not: tests running side by side count only their own.
 */
export async function tenantContainers(tenant: string, labels: Record<string, string> = {}): Promise<string[]> {
  const filters = Object.entries({ "corral.tenant": tenant, ...labels }).flatMap(([k, v]) => ["--filter", `label=${k}=${v}`]);
  return (await docker(["ps", "-a", "-q", "--no-trunc", ...filters])).split("\n").filter(Boolean);
}
