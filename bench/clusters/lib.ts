/**
 * Shared parts of the cluster benchmarks: a Corral on loopback with the JetStream fsync mode under test (tenancy
 * and gateway in this process; solver and clusters services and provisioners as child processes, so they get their
 * own cores), cluster status tracking through a KV watch, per-process CPU accounting and the raw JetStream
 * acknowledged-publish rate.
 */
import { execSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { jetstream, jetstreamManager, RetentionPolicy, StorageType } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { SERVICE_NODE_OPTIONS, startNats, startNatsCluster, type NatsHandle } from "@corral/deploy";
import { startGateway, type Gateway } from "@corral/gateway";
import { startTenancyService, type TenancyService } from "@corral/tenancy";
import { buckets, decode, encode, fromKeyToken, kvKey, streams, type ProvisionerRecord } from "@corral/contracts";
import { connectNats, openBucket, readValue, silentLogger, storeReplicas } from "@corral/shared";
import { openStoredClusterState, type ClusterRecord, type PlanRecord } from "@corral/clusters/testing";
import {
  createProcessSet,
  startClustersProcess,
  startProvisionerProcess,
  startServiceProcess,
  type ProcessSet,
  type ServiceProcess,
} from "../../test/helpers/processes.js";

export type SyncMode = "lazy" | "always";

export interface BenchSystemOptions {
  sync: SyncMode;
  /** nats-servers: 1, or a loopback JetStream cluster of this many (Corral's state then at 3 replicas). @default 1 */
  natsNodes?: number;
  /** Clusters-service child processes. */
  clustersProcesses: number;
  /** Solver-service child processes (the clusters service solves layouts and plans there). @default 1 */
  solverProcesses?: number;
  /** Provisioner child processes, each with this capacity (worker loops). */
  provisioners: number;
  provisionerCapacity: number;
  /** Extra node options of the clusters, solver and provisioner processes (`--cpu-prof`, ...). */
  nodeArgs?: { clusters?: string[]; solvers?: string[]; provisioners?: string[] };
  /** Gateway request timeout (a 10,000-node create answers after its first stage is published). @default 15000 */
  requestTimeoutMs?: number;
}

export interface BenchSystem {
  /** The (first) nats-server: its monitoring port answers for the whole system. */
  nats: NatsHandle;
  /** Every nats-server of the system. */
  natsNodes: NatsHandle[];
  /** Client URL(s) of every nats-server, comma separated. */
  natsUrl: string;
  nc: NatsConnection;
  baseUrl: string;
  procs: ProcessSet;
  clusters: ServiceProcess[];
  solvers: ServiceProcess[];
  provisioners: ServiceProcess[];
  provisionerIds: string[];
  /** Waits until the provisioners together run `workers` loops for `tenant`. */
  waitForWorkers(tenant: string, workers: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startBenchSystem(options: BenchSystemOptions): Promise<BenchSystem> {
  const syncAlways = options.sync === "always";
  const natsCluster = (options.natsNodes ?? 1) > 1 ? await startNatsCluster({ nodes: options.natsNodes ?? 1, syncAlways }) : undefined;
  const natsNodes = natsCluster ? Array.from({ length: options.natsNodes ?? 1 }, (_, i) => natsCluster.node(i)) : [await startNats({ jetstream: true, syncAlways })];
  const nats = natsNodes[0] as NatsHandle;
  const natsUrl = natsCluster?.url ?? nats.url;
  const connections: NatsConnection[] = [];
  const open = async (name: string) => {
    const nc = await connectNats({ url: natsUrl, name });
    connections.push(nc);
    return nc;
  };
  const procs = createProcessSet();
  const workDir = await mkdtemp(join(tmpdir(), "corral-bench-"));
  let tenancy: TenancyService | undefined;
  let gateway: Gateway | undefined;
  const stop = async () => {
    await procs.stopAll(10_000);
    await gateway?.stop();
    await tenancy?.stop();
    await Promise.all(connections.map((c) => c.drain().catch(() => {})));
    await (natsCluster ?? nats).stop();
    await rm(workDir, { recursive: true, force: true });
  };
  try {
    tenancy = await startTenancyService({ nc: await open("tenancy"), log: silentLogger });
    gateway = await startGateway({
      nc: await open("gateway"),
      log: silentLogger,
      host: "127.0.0.1",
      port: 0,
      requestTimeoutMs: options.requestTimeoutMs ?? 15_000,
    });
    const solvers: ServiceProcess[] = [];
    for (let i = 0; i < (options.solverProcesses ?? 1); i++) {
      solvers.push(
        await procs.start(() =>
          startServiceProcess({
            name: `solver-${i}`,
            entry: "services/solver/src/index.ts",
            env: { CORRAL_NATS_URL: natsUrl, CORRAL_LOG_LEVEL: "info" },
            readyMsg: "solver service started",
            nodeArgs: [SERVICE_NODE_OPTIONS, ...(options.nodeArgs?.solvers ?? [])],
          }),
        ),
      );
    }
    const clusters: ServiceProcess[] = [];
    for (let i = 0; i < options.clustersProcesses; i++) {
      clusters.push(await procs.start(() => startClustersProcess({ natsUrl, name: `clusters-${i}`, nodeArgs: [SERVICE_NODE_OPTIONS, ...(options.nodeArgs?.clusters ?? [])] })));
    }
    const nc = await open("bench");
    const registry = await openBucket(nc, buckets.provisioners);
    const provisionerIds = Array.from({ length: options.provisioners }, (_, i) => `bench-p${i}`);
    const record = async (id: string) => (await readValue<ProvisionerRecord>(registry, kvKey(id)))?.value;
    const provisioners = await Promise.all(
      provisionerIds.map((id) =>
        procs.start(() =>
          startProvisionerProcess({
            natsUrl,
            id,
            capacity: options.provisionerCapacity,
            workDir: join(workDir, id),
            logLevel: "warn",
            nodeArgs: [SERVICE_NODE_OPTIONS, ...(options.nodeArgs?.provisioners ?? [])],
            ready: async () => (await record(id)) !== undefined,
          }),
        ),
      ),
    );
    return {
      nats,
      natsNodes,
      natsUrl,
      nc,
      baseUrl: `http://127.0.0.1:${gateway.port}/v2`,
      procs,
      clusters,
      solvers,
      provisioners,
      provisionerIds,
      async waitForWorkers(tenant, workers, timeoutMs = 20_000) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          let running = 0;
          for (const id of provisionerIds) running += (await record(id))?.usage[tenant] ?? 0;
          if (running >= workers) return;
          if (Date.now() > deadline) throw new Error(`only ${running} of ${workers} workers of ${tenant} running`);
          await new Promise((r) => setTimeout(r, 100));
        }
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Follows every cluster record through a KV watch: when each reached which status. */
export interface ClusterTracker {
  /** ms timestamp when `id` was first seen with `status`. */
  reachedAt(id: string, status: string): number | undefined;
  /** Resolves when every id has reached `status` (rejects after `timeoutMs`). */
  waitAll(ids: readonly string[], status: string, timeoutMs: number): Promise<number>;
  stop(): void;
}

export async function trackClusters(nc: NatsConnection): Promise<ClusterTracker> {
  const kv = (await openStoredClusterState(nc)).kv.clusters;
  const reached = new Map<string, Map<string, number>>();
  const waiters = new Set<() => void>();
  const watch = await kv.watch({ key: ">" });
  void (async () => {
    for await (const e of watch) {
      if (e.operation !== "PUT") continue;
      const record = decode<ClusterRecord>(e.value);
      const id = fromKeyToken(e.key);
      const byStatus = reached.get(id) ?? new Map<string, number>();
      const status = String(record.actor.value);
      if (!byStatus.has(status)) byStatus.set(status, Date.now());
      reached.set(id, byStatus);
      for (const w of waiters) w();
    }
  })();
  const reachedAt = (id: string, status: string) => reached.get(id)?.get(status);
  return {
    reachedAt,
    waitAll(ids, status, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const failed = ids.find((id) => reachedAt(id, "incomplete") !== undefined || reachedAt(id, "inconsistent") !== undefined);
          if (failed) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(new Error(`cluster ${failed} failed instead of reaching ${status}`));
            return;
          }
          const times = ids.map((id) => reachedAt(id, status));
          if (times.every((x) => x !== undefined)) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(Math.max(...(times as number[])));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          const missing = ids.filter((id) => reachedAt(id, status) === undefined);
          reject(new Error(`${missing.length} of ${ids.length} clusters not ${status} after ${timeoutMs} ms (e.g. ${missing.slice(0, 5).join(", ")})`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    stop: () => watch.stop(),
  };
}

/** Reads a plan record (stored by the clusters service). */
export async function readPlan(nc: NatsConnection, clusterId: string, planId: string): Promise<PlanRecord | undefined> {
  return (await (await openStoredClusterState(nc)).plan(clusterId, planId))?.value;
}

/** CPU seconds (user + system) a process has used, from /proc. */
export function cpuSeconds(pid: number, options: { withChildren?: boolean } = {}): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields after the command: state is [0]; utime is field 14 overall -> [11], stime [12]; clock ticks of 10 ms.
    // cutime [13] and cstime [14]: the children it waited for (a provisioner's shell actions).
    const children = options.withChildren ? Number(fields[13]) + Number(fields[14]) : 0;
    return (Number(fields[11]) + Number(fields[12]) + children) / 100;
  } catch {
    return 0;
  }
}

/** Busy and idle CPU seconds of the whole machine (all cores), from /proc/stat. */
export function machineCpuSeconds(): { busy: number; idle: number } {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    const busy = (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
    return { busy: busy / 100, idle: ((idle ?? 0) + (iowait ?? 0)) / 100 };
  } catch {
    return { busy: 0, idle: 0 };
  }
}

/**
 * CPU seconds per process of the system (nats-server, each child, this process) between two calls, plus what the
 * rest of the machine used (other work on a shared machine competes for the same cores) and what stayed idle.
 */
export function cpuMeter(sys: Pick<BenchSystem, "natsNodes" | "clusters" | "provisioners"> & Partial<Pick<BenchSystem, "solvers">>, selfLabel = "bench process (tenancy, gateway, client)"): () => Record<string, number> {
  const pids: Array<[string, number]> = [
    ...sys.natsNodes.map((n, i): [string, number] => [sys.natsNodes.length > 1 ? `nats-server-${i}` : "nats-server", n.pid]),
    ...sys.clusters.map((p): [string, number] => [p.name, p.pid]),
    ...(sys.solvers ?? []).map((p): [string, number] => [p.name, p.pid]),
    ...sys.provisioners.map((p): [string, number] => [p.name, p.pid]),
  ];
  const start = new Map(pids.map(([name, pid]) => [name, cpuSeconds(pid)]));
  const self = process.cpuUsage();
  const machine0 = machineCpuSeconds();
  return () => {
    const out: Record<string, number> = {};
    let ours = 0;
    for (const [name, pid] of pids) {
      out[name] = round(cpuSeconds(pid) - (start.get(name) ?? 0), 2);
      ours += out[name] ?? 0;
    }
    const used = process.cpuUsage(self);
    out[selfLabel] = round((used.user + used.system) / 1e6, 2);
    ours += out[selfLabel] ?? 0;
    const machine1 = machineCpuSeconds();
    out["other processes on the machine"] = round(Math.max(0, machine1.busy - machine0.busy - ours), 2);
    out["idle"] = round(machine1.idle - machine0.idle, 2);
    return out;
  };
}

/** JetStream API and message counters of the server (`/varz`, `/jsz`). */
export async function serverCounters(sys: BenchSystem): Promise<{ inMsgs: number; outMsgs: number; jsApiTotal: number }> {
  const varz = (await (await fetch(`${sys.nats.monitorUrl}/varz`)).json()) as { in_msgs: number; out_msgs: number };
  const jsz = (await (await fetch(`${sys.nats.monitorUrl}/jsz`)).json()) as { api?: { total?: number } };
  return { inMsgs: varz.in_msgs, outMsgs: varz.out_msgs, jsApiTotal: jsz.api?.total ?? 0 };
}

/** Messages stored in each stream (KV buckets' streams too) and messages acked on each durable consumer. */
export interface JetStreamWriteCounts {
  storedByStream: Record<string, number>;
  ackedByConsumer: Record<string, number>;
}

interface JszAccount {
  stream_detail?: Array<{
    name: string;
    state: { last_seq: number };
    consumer_detail?: Array<{ name: string; config?: { ack_policy?: string }; ack_floor: { consumer_seq: number } }>;
  }>;
}

/**
 * Every JetStream write so far, from the server's `/jsz`: a stored message (acked publish, KV put/update, event)
 * moves its stream's last sequence; an ack of a consumed message moves its consumer's ack floor (acks are
 * written to the consumer's store, and on a work-queue stream they remove the message).
 */
export async function jetstreamWrites(monitorUrl: string): Promise<JetStreamWriteCounts> {
  const jsz = (await (await fetch(`${monitorUrl}/jsz?streams=true&consumers=true&config=true`)).json()) as { account_details?: JszAccount[] };
  const storedByStream: Record<string, number> = {};
  const ackedByConsumer: Record<string, number> = {};
  for (const account of jsz.account_details ?? []) {
    for (const stream of account.stream_detail ?? []) {
      storedByStream[stream.name] = (storedByStream[stream.name] ?? 0) + stream.state.last_seq;
      for (const c of stream.consumer_detail ?? []) {
        // Watches and ordered consumers ack nothing (their ack floor only follows deliveries).
        if (c.config?.ack_policy === "none") continue;
        // Per-tenant task consumers are summed under their stream: the count per tenant says nothing more.
        const key = `${stream.name} acks`;
        ackedByConsumer[key] = (ackedByConsumer[key] ?? 0) + c.ack_floor.consumer_seq;
      }
    }
  }
  return { storedByStream, ackedByConsumer };
}

/** Writes between two counts, per task: each kind, and their total. */
export function writesPerTask(before: JetStreamWriteCounts, after: JetStreamWriteCounts, tasks: number) {
  const stored = perTask(before.storedByStream, after.storedByStream, tasks);
  const acks = perTask(before.ackedByConsumer, after.ackedByConsumer, tasks);
  const total = round([...Object.values(stored), ...Object.values(acks)].reduce((s, v) => s + v, 0), 2);
  return { total, stored, acks };
}

/**
 * Messages on the events stream by kind (the last two subject tokens: `task.ended`, `plan.stage`, `node.changes`, ...),
 * over every tenant and cluster so far.
 */
export async function eventsByKind(nc: NatsConnection): Promise<Record<string, number>> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(streams.events, { subjects_filter: ">" });
  const counts: Record<string, number> = {};
  for (const [subject, n] of Object.entries(info.state.subjects ?? {})) {
    const kind = subject.split(".").slice(-2).join(".");
    counts[kind] = (counts[kind] ?? 0) + n;
  }
  return counts;
}

/** Per task, each kind's growth between two counts, largest first. */
export function perTask(before: Record<string, number>, after: Record<string, number>, tasks: number): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after)
      .map(([k, v]) => [k, round((v - (before[k] ?? 0)) / tasks, 2)] as const)
      .filter(([, v]) => v > 0)
      .sort((x, y) => y[1] - x[1]),
  );
}

/**
 * Acknowledged publishes per second into a scratch file stream of the same server, `inFlight` at a time, for
 * about `durationMs`, with `payload` as every message.
 */
export async function rawPublishRate(nc: NatsConnection, payload: Uint8Array, inFlight = 32, durationMs = 3_000): Promise<number> {
  const jsm = await jetstreamManager(nc);
  const name = "BENCH_RAW";
  // As many replicas as Corral's own streams on these servers.
  await jsm.streams.add({ name, subjects: ["bench.raw"], storage: StorageType.File, retention: RetentionPolicy.Limits, num_replicas: storeReplicas(nc) });
  try {
    const js = jetstream(nc);
    let done = 0;
    const started = Date.now();
    const until = started + durationMs;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (Date.now() < until) {
          await js.publish("bench.raw", payload);
          done++;
        }
      }),
    );
    return Math.round((done * 1000) / (Date.now() - started));
  } finally {
    await jsm.streams.delete(name);
  }
}

export const round = (n: number, digits = 0) => Math.round(n * 10 ** digits) / 10 ** digits;

export const machine = () => `${cpus().length} cores (${cpus()[0]?.model ?? "?"}); every process shares them`;

/**
 * The machine's speed at the moment, for comparing runs taken at different times (the cores of this shared machine
 * drift by 20% or more): microseconds one core takes to encode and decode a task-sized object as msgpack and JSON,
 * median of 5 rounds.
 */
export function machineSpeedMicros(): number {
  const node = (i: number) => ({ hostname: `n${i}.example`, ipaddresses: { access_v4: `10.0.0.${i}` }, nodenum: 1000 + i, services: ["base"] });
  const sample = { taskId: "00000001-001-001", dispatch: 1, config: { nodes: Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`n${i}`, node(i)])) } };
  const rounds: number[] = [];
  for (let r = 0; r < 5; r++) {
    const started = performance.now();
    for (let i = 0; i < 5_000; i++) {
      decode(encode(sample));
      JSON.parse(JSON.stringify(sample));
    }
    rounds.push(((performance.now() - started) * 1000) / 5_000);
  }
  return round(rounds.sort((a, b) => a - b)[2] ?? 0, 1);
}

/**
 * Waits (at most `maxMs`) until the machine has been at least 90% idle for half a second: the kernel goes on
 * writing back and discarding (TRIM) the store files of the run before, which otherwise lands in the next run.
 * Answers how long it waited.
 */
export async function waitForQuietMachine(maxMs = 15_000): Promise<number> {
  const started = Date.now();
  execSync("sync");
  while (Date.now() - started < maxMs) {
    const before = machineCpuSeconds();
    await new Promise((r) => setTimeout(r, 500));
    const after = machineCpuSeconds();
    const busy = after.busy - before.busy;
    const total = busy + after.idle - before.idle;
    if (total > 0 && busy / total < 0.1) break;
  }
  return Date.now() - started;
}
