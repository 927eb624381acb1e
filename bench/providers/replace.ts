/**
 * Time to replace a node on the `docker` provider (`POST /clusters/{id}/nodes/{nodeId}/replace`): a cluster of the
 * peers catalog (test/helpers/docker-peers.ts: `leader` on one node, `member` on every node listing its peers) is
 * created, then its member nodes are replaced one after the other, each round either while the old container
 * still runs (`live`: the plan deletes it) or right after `docker rm -f` removed it (`vanished`: a dead machine,
 * replaced before a health check saw it go, so the plan still sends a DELETE that finds nothing). Per
 * round: request -> answer, -> active; the plan's critical path split into provider and automator time
 * (bench/real-machines/plan-timing.ts; the replaced node's tasks are no longer in the cluster's node list, so its
 * DELETE counts as unseen); checked afterwards: one container per node, the old one gone, every member listing the
 * new node.
 *
 * Runs nats-server, tenancy, plugins, gateway, solver and one clusters service in this process, one provisioner as
 * a child process (bundled plugins). Run alone (it measures a shared 2-core machine):
 *   node --import=tsx bench/providers/replace.ts                 -> bench/results/providers-replace.json
 *   BENCH_SMOKE=1 node --import=tsx bench/providers/replace.ts   -> bench/results/providers-replace-smoke.json
 * Env: BENCH_NODES (cluster size, 5; smoke 3), BENCH_ROUNDS (replacements per mode, 3; smoke 1),
 *      BENCH_MODES ("live,vanished"), BENCH_TIMEOUT_S (300 per plan)
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { NodeView } from "@corral/contracts";
import { api, type Caller } from "../../test/helpers/api.js";
import { createCluster, waitForStatus } from "../../test/helpers/clusters.js";
import { removeTenantContainers, tenantContainers, type DemoTenant } from "../../test/helpers/docker-demo.js";
import { ensureDockerForTests } from "../../test/helpers/docker-hosts.js";
import { createPeersTenant, peersIn, PEERS_TEMPLATE } from "../../test/helpers/docker-peers.js";
import { startProvisionerProcess, type ServiceProcess } from "../../test/helpers/processes.js";
import { startSystem, type TestSystem } from "../../test/helpers/system.js";
import { envNumber } from "../env.js";
import { median } from "../stats.js";
import { planTiming, timingSummary, type NodeActionsView, type PlanView } from "../real-machines/plan-timing.js";
import { cpuWindow, loadSnapshot, log, machine, round, writeResult } from "../real-machines/lib.js";

const exec = promisify(execFile);
const SMOKE = process.env["BENCH_SMOKE"] === "1";
const NODES = envNumber("BENCH_NODES", SMOKE ? 3 : 5);
const ROUNDS = envNumber("BENCH_ROUNDS", SMOKE ? 1 : 3);
const MODES = (process.env["BENCH_MODES"] ?? "live,vanished").split(",").map((m) => m.trim()) as Mode[];
const TIMEOUT_MS = envNumber("BENCH_TIMEOUT_S", 300) * 1000;
const OUT = SMOKE ? "providers-replace-smoke.json" : "providers-replace.json";
const WORKERS = 8;

type Mode = "live" | "vanished";

async function must<B = any>(caller: Caller, baseUrl: string, method: string, path: string, body?: unknown): Promise<B> {
  const res = await api<B>(baseUrl, method, path, { ...caller, ...(body !== undefined ? { body } : {}) });
  if (res.status !== 200) throw new Error(`${method} ${path}: HTTP ${res.status} ${res.text}`);
  return res.body;
}

/** One replacement: the old node, its container's fate, timings, and what the containers showed afterwards. */
async function replaceOnce(sys: TestSystem, tenant: DemoTenant, clusterId: string, mode: Mode) {
  const nodes = (await must<{ nodes: NodeView[] }>(tenant.user, sys.baseUrl, "GET", `/clusters/${clusterId}`)).nodes;
  const old = nodes.filter((n) => !n.services.includes("leader"))[0]!;
  const [oldContainer] = await tenantContainers(tenant.name, { "corral.node": old.id });
  if (mode === "vanished" && oldContainer) await exec("docker", ["rm", "-f", "-v", oldContainer]);
  const cpu = cpuWindow();
  const started = performance.now();
  const { planId } = await must<{ planId: string }>(tenant.user, sys.baseUrl, "POST", `/clusters/${clusterId}/nodes/${old.id}/replace`, {});
  const answeredMs = performance.now() - started;
  await waitForStatus(sys.baseUrl, tenant.user, clusterId, "active", TIMEOUT_MS);
  const activeMs = performance.now() - started;
  const used = cpu();

  const after = (await must<{ nodes: NodeView[] }>(tenant.user, sys.baseUrl, "GET", `/clusters/${clusterId}`)).nodes;
  const plan = (await must<PlanView[]>(tenant.user, sys.baseUrl, "GET", `/clusters/${clusterId}/plans`)).find((p) => p.id === planId);
  if (!plan) throw new Error(`plan ${planId} not listed`);
  const added = after.filter((n) => !nodes.some((m) => m.id === n.id));
  const hostnames = after.map((n) => String(n.properties["hostname"])).sort();
  const containers = await tenantContainers(tenant.name, { "corral.cluster": clusterId });
  let membersListingEveryNode = 0;
  for (const c of containers) if (JSON.stringify(await peersIn(c)) === JSON.stringify(hostnames)) membersListingEveryNode++;
  const check = {
    nodes: after.length,
    containers: containers.length,
    oldNodeGone: !after.some((n) => n.id === old.id),
    oldContainerGone: (await tenantContainers(tenant.name, { "corral.node": old.id })).length === 0,
    newNodes: added.map((n) => n.id),
    membersListingEveryNode,
  };
  const ok = check.nodes === NODES && check.containers === NODES && check.oldNodeGone && check.oldContainerGone && added.length === 1 && membersListingEveryNode === NODES;
  if (!ok) throw new Error(`replace of ${old.id} (${mode}) left ${JSON.stringify(check)}`);
  log(`${mode}: replaced ${old.id} by ${added[0]!.id}: answered ${round(answeredMs)} ms, active ${round(activeMs)} ms`);
  return {
    mode,
    oldNode: old.id,
    newNode: added[0]!.id,
    answeredMs: round(answeredMs, 1),
    activeMs: round(activeMs),
    cpu: used,
    plan: timingSummary(planTiming(plan, after as unknown as NodeActionsView[])),
    check,
  };
}

const dir = await mkdtemp(join(tmpdir(), "corral-bench-replace-"));
await ensureDockerForTests();
const sys = await startSystem({ clusters: 1, reconcileIntervalMs: 1000 });
let provisioner: ServiceProcess | undefined;
let tenant: DemoTenant | undefined;
try {
  provisioner = await startProvisionerProcess({ natsUrl: sys.nats.url, id: "bench-replace", capacity: WORKERS, workDir: join(dir, "work") });
  tenant = await createPeersTenant(sys, "bench-replace", { workers: WORKERS });
  const loadBefore = await loadSnapshot();
  const createStarted = performance.now();
  const clusterId = await createCluster(sys.baseUrl, tenant.user, { name: "replace", clusterTemplate: PEERS_TEMPLATE, numMachines: NODES });
  await waitForStatus(sys.baseUrl, tenant.user, clusterId, "active", TIMEOUT_MS);
  const createMs = performance.now() - createStarted;
  log(`cluster ${clusterId}: ${NODES} nodes active in ${round(createMs)} ms`);
  const rounds: Array<Awaited<ReturnType<typeof replaceOnce>>> = [];
  for (const mode of MODES) for (let i = 0; i < ROUNDS; i++) rounds.push(await replaceOnce(sys, tenant, clusterId, mode));
  const byMode = Object.fromEntries(
    MODES.map((mode) => {
      const ms = rounds.filter((r) => r.mode === mode).map((r) => r.activeMs);
      return [mode, { rounds: ms.length, activeMs: { median: median(ms), min: Math.min(...ms), max: Math.max(...ms) } }];
    }),
  );
  writeResult(OUT, {
    date: new Date().toISOString(),
    smoke: SMOKE,
    machine: machine(),
    loadBefore,
    loadAfter: await loadSnapshot(),
    configuration: {
      provider: "docker, flavor 1x256m, image corral/node:bookworm",
      template: `${PEERS_TEMPLATE}: leader on one node, member on every node (CONFIGURE writes its peers list), ${NODES} nodes`,
      provisioner: `one child process, capacity ${WORKERS}; the tenant has ${WORKERS} workers`,
      modes: "live: the old container runs during the replace; vanished: docker rm -f before the request",
    },
    createOfTheClusterMs: round(createMs),
    byMode,
    rounds,
  });
} finally {
  await provisioner?.stop();
  if (tenant) await removeTenantContainers(tenant.name, tenant.network);
  await sys.stop();
  await rm(dir, { recursive: true, force: true });
}
