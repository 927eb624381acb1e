/**
 * The live part of bench/solver/grow.ts: a `sim` cluster of `nodes` nodes (zero delays) grows by `grow` nodes
 * through `POST /clusters/{id}/nodes` and shrinks back through `POST /clusters/{id}/nodes/remove`, with the
 * clusters, solver and provisioner services as child processes (bench/clusters/lib.ts). Per operation: the dry run
 * (layout and plan, nothing run: the solver's and the planner's time through the services), request -> answer,
 * request -> active, and the plan's size. One service, `base`, whose CONFIGURE runs `true` (a process per task).
 * Two cases: `quiet` (the config names no node: only the new or removed nodes get tasks) and `peers` (the config
 * lists every node with `%join(host.service.base,',')%`: every remaining node gets CONFIGURE).
 */
import { api, type Caller } from "../../test/helpers/api.js";
import { createClusterCatalog, type ClusterCatalog } from "../../test/helpers/cluster-fixture.js";
import { waitForStatus } from "../../test/helpers/clusters.js";
import { cpuMeter, round, startBenchSystem, type BenchSystem } from "../clusters/lib.js";

export interface GrowLiveOptions {
  nodes: number;
  grow: number;
  provisioners: number;
  capacity: number;
  timeoutMs: number;
}

type Case = "quiet" | "peers";

async function must<B = any>(sys: BenchSystem, caller: Caller, method: string, path: string, body?: unknown): Promise<{ body: B; ms: number }> {
  const started = performance.now();
  const res = await api<B>(sys.baseUrl, method, path, { ...caller, ...(body !== undefined ? { body } : {}) });
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`${method} ${path}: HTTP ${res.status} ${res.text.slice(0, 500)}`);
  return { body: res.body, ms };
}

interface DryRun {
  layout: { nodes: Array<{ id: string }> };
  plan: { stages: unknown[][] };
}

/** A dry run, then the operation itself followed to active. */
async function operate(sys: BenchSystem, caller: Caller, id: string, path: string, body: unknown, timeoutMs: number) {
  const dry = await must<DryRun>(sys, caller, "POST", `${path}?dryRun=true`, body);
  const cpu = cpuMeter(sys);
  const started = performance.now();
  const answered = await must<{ planId: string }>(sys, caller, "POST", path, body);
  const status = await waitForStatus(sys.baseUrl, caller, id, "active", timeoutMs);
  const activeMs = performance.now() - started;
  return {
    dryRunMs: round(dry.ms, 1),
    planStages: dry.body.plan.stages.length,
    planTasks: dry.body.plan.stages.reduce((n, stage) => n + stage.length, 0),
    nodesAfter: dry.body.layout.nodes.length,
    requestToAnswerMs: round(answered.ms, 1),
    requestToActiveMs: round(activeMs),
    tasks: status.stepstotal,
    cpuSecondsByProcess: cpu(),
  };
}

async function runCase(sys: BenchSystem, catalog: ClusterCatalog, kind: Case, options: GrowLiveOptions) {
  const config = kind === "peers" ? { peers: "%join(host.service.base,',')%" } : {};
  const createStarted = performance.now();
  const created = await must<{ id: string }>(sys, catalog.admin, "POST", "/clusters", {
    name: `grow-${kind}`,
    clusterTemplate: catalog.template,
    numMachines: options.nodes,
    config,
  });
  const id = created.body.id;
  await waitForStatus(sys.baseUrl, catalog.admin, id, "active", options.timeoutMs);
  const createMs = performance.now() - createStarted;
  process.stderr.write(`[grow ${kind}] ${options.nodes} nodes active in ${round(createMs)} ms\n`);

  const grow = await operate(sys, catalog.admin, id, `/clusters/${id}/nodes`, { numMachines: options.grow }, options.timeoutMs);
  process.stderr.write(`[grow ${kind}] +${options.grow}: active in ${grow.requestToActiveMs} ms\n`);
  const nodes = (await must<{ nodes: Array<{ id: string }> }>(sys, catalog.admin, "GET", `/clusters/${id}`)).body.nodes;
  if (nodes.length !== options.nodes + options.grow) throw new Error(`grown to ${nodes.length} nodes, not ${options.nodes + options.grow}`);
  const added = nodes.slice(options.nodes).map((n) => n.id);
  const shrink = await operate(sys, catalog.admin, id, `/clusters/${id}/nodes/remove`, { nodes: added }, options.timeoutMs);
  process.stderr.write(`[grow ${kind}] -${options.grow}: active in ${shrink.requestToActiveMs} ms\n`);
  const left = (await must<{ nodes: Array<{ id: string }> }>(sys, catalog.admin, "GET", `/clusters/${id}`)).body.nodes.length;
  if (left !== options.nodes) throw new Error(`shrunk to ${left} nodes, not ${options.nodes}`);
  await must(sys, catalog.admin, "DELETE", `/clusters/${id}`);
  await waitForStatus(sys.baseUrl, catalog.admin, id, "terminated", options.timeoutMs);
  return { createMs: round(createMs), grow, shrinkBack: shrink };
}

/** Both cases on one system. */
export async function growLive(options: GrowLiveOptions) {
  const sys = await startBenchSystem({
    sync: "lazy",
    clustersProcesses: 1,
    provisioners: options.provisioners,
    provisionerCapacity: options.capacity,
    requestTimeoutMs: options.timeoutMs,
  });
  try {
    // One tenant for both cases: its workers take every worker loop.
    const catalog = await createClusterCatalog(sys.baseUrl, {
      workers: options.provisioners * options.capacity,
      maxNodes: (options.nodes + options.grow) * 2,
      services: [{ name: "base", actions: { configure: "true" } }],
    });
    await sys.waitForWorkers(catalog.tenant, options.provisioners * options.capacity);
    return {
      nodes: options.nodes,
      grow: options.grow,
      system: `one clusters, one solver and ${options.provisioners} provisioner process(es) of capacity ${options.capacity}; sim with zero delays; JetStream lazy fsync`,
      cases: {
        quiet: await runCase(sys, catalog, "quiet", options),
        peers: await runCase(sys, catalog, "peers", options),
      },
    };
  } finally {
    await sys.stop();
  }
}
