/**
 * Live events under load: 1,000 event-stream clients on one gateway (Corral as `npm start` runs it, every service a
 * process of its own) while 50 clusters are created on the `sim` provider. Clients are a mix: WebSockets subscribed
 * to the whole tenant (opened before the first create), and per cluster WebSockets subscribed to it and SSE streams
 * (opened right after its create answered). Measured: the delay from a task's result (`resultAt` of `task.ended`:
 * when the worker published it) to each client receiving it, over the events received live (an event replayed on
 * connect is left out); the gateway's resident memory before the clients, with them connected, and at the end; its
 * CPU. Bounded: stops when every cluster settled or after BENCH_TIMEOUT_MS. Writes bench/results/gateway-events.json.
 *
 * Run: node --import=tsx bench/gateway/events.ts
 * Env: BENCH_CLUSTERS (50), BENCH_TENANT_SOCKETS (50), BENCH_SOCKETS_PER_CLUSTER (5), BENCH_SSE_PER_CLUSTER (14),
 *      BENCH_CREATE_CONCURRENCY (5), BENCH_CREATE_EVERY_MS (0: as fast as the concurrency allows; else the creates
 *      start at most one per this many ms), BENCH_TIMEOUT_MS (300000)
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { EventSocketMessage } from "@corral/contracts";
import { connectNats, mapLimit } from "@corral/shared";
import { createCluster, tenantWithSimCatalog } from "../../test/helpers/clusters.js";
import { openEventSocket, openSse, opened, type SocketClient, type SseClient, type SseMessage } from "../../test/helpers/event-clients.js";
import { cpuSeconds, machine, machineCpuSeconds, round } from "../clusters/lib.js";
import { launchCorral } from "./launched-corral.js";
import { envNumber as env } from "../env.js";

const CLUSTERS = env("BENCH_CLUSTERS", 50);
const TENANT_SOCKETS = env("BENCH_TENANT_SOCKETS", 50);
const SOCKETS_PER_CLUSTER = env("BENCH_SOCKETS_PER_CLUSTER", 5);
const SSE_PER_CLUSTER = env("BENCH_SSE_PER_CLUSTER", 14);
const CREATE_CONCURRENCY = env("BENCH_CREATE_CONCURRENCY", 5);
const TIMEOUT_MS = env("BENCH_TIMEOUT_MS", 300_000);
const CREATE_EVERY_MS = env("BENCH_CREATE_EVERY_MS", 0);

const rssMiB = (pid: number) => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"));
  return round(Number(line?.split(/\s+/)[1] ?? 0) / 1024, 1);
};
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

/** Delays (ms) of the task ends clients received live: from the result, and from the clusters service's event. */
const delays: number[] = [];
const fromEvent: number[] = [];
/** Per task end (counted once): from its result to the clusters service publishing the event. */
const serviceDelays = new Map<string, number>();
/** Delays by kind of client, and of events that came within a second of the client opening (its replay may hold them). */
const byKind: Record<string, number[]> = { tenantSocket: [], clusterSocket: [], sse: [], firstSecond: [] };
let replayedTaskEnds = 0;
let eventsReceived = 0;
const settled = new Set<string>();

/** Counts one received event; `openedAt`: when the client's stream or subscription opened. */
/** CPU seconds of each process, with its waited-for children's. */
const cpuWithChildren = (pids: Record<string, number>) =>
  Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid, { withChildren: true })]));

function received(
  event: { type: string; clusterId: string; at: number; taskId?: string; attempt?: number; resultAt?: number; status?: unknown },
  openedAt: number,
  now: number,
  kind: "tenantSocket" | "clusterSocket" | "sse",
) {
  eventsReceived++;
  if (event.type === "task.ended" && event.resultAt !== undefined) {
    if (event.resultAt >= openedAt) {
      delays.push(now - event.resultAt);
      byKind[kind]!.push(now - event.resultAt);
      if (now - openedAt < 1000) byKind["firstSecond"]!.push(now - event.resultAt);
      fromEvent.push(now - event.at);
      serviceDelays.set(`${event.taskId}.${event.attempt}`, event.at - event.resultAt);
    } else replayedTaskEnds++;
  }
  if (event.type === "cluster.status" && event.status !== "pending") settled.add(event.clusterId);
}

const corral = await launchCorral();
const nc = await connectNats({ url: corral.natsUrl, name: "bench-events" });
const sseClients: SseClient[] = [];
const sockets: SocketClient[] = [];
let serverClosed = 0;
try {
  const gatewayPid = corral.pids()["gateway"];
  if (!gatewayPid) throw new Error("no gateway process found");
  const tenant = await tenantWithSimCatalog({ baseUrl: corral.baseUrl, nc }, "bench-events", { workers: 8 });
  const rssBefore = rssMiB(gatewayPid);
  const cpuBefore = cpuSeconds(gatewayPid);
  const processPids = corral.pids();
  const processCpuBefore = cpuWithChildren(processPids);

  const openSocket = async (subscribe: Record<string, unknown>) => {
    let openedAt = Infinity;
    const socket = opened(
      await openEventSocket(corral.baseUrl, tenant.admin, {
        keep: false,
        onMessage: (m: EventSocketMessage) => {
          if (m.type === "subscribed") openedAt = Date.now();
          else if (m.type === "event") received(m.event as never, openedAt, Date.now(), subscribe["tenant"] ? "tenantSocket" : "clusterSocket");
        },
      }),
    );
    socket.send({ type: "subscribe", ...subscribe });
    void socket.closed.then(({ code }) => code !== 1000 && code !== 1005 && serverClosed++);
    sockets.push(socket);
  };
  const openStream = async (clusterId: string) => {
    const openedAt = Date.now();
    const sse = await openSse(corral.baseUrl, tenant.user, clusterId, {
      keep: false,
      onMessage: (m: SseMessage) => {
        if (m.event === "closing") serverClosed++;
        else received(m.data as never, openedAt, Date.now(), "sse");
      },
    });
    if (sse.status !== 200) throw new Error(`SSE refused: ${sse.status} ${JSON.stringify(sse.body)}`);
    sseClients.push(sse);
  };

  for (let i = 0; i < TENANT_SOCKETS; i++) await openSocket({ tenant: true });
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const benchCpu = process.cpuUsage();
  const machineBefore = machineCpuSeconds();
  const started = Date.now();
  const ids: string[] = [];
  await mapLimit(
    Array.from({ length: CLUSTERS }, (_, i) => i),
    CREATE_CONCURRENCY,
    async (i) => {
      const due = started + i * CREATE_EVERY_MS - Date.now();
      if (due > 0) await new Promise((r) => setTimeout(r, due));
      const id = await createCluster(corral.baseUrl, tenant.user, { name: `ev${i}`, clusterTemplate: "webapp", numMachines: 2 });
      ids.push(id);
      await Promise.all([
        ...Array.from({ length: SOCKETS_PER_CLUSTER }, () => openSocket({ clusterId: id })),
        ...Array.from({ length: SSE_PER_CLUSTER }, () => openStream(id)),
      ]);
    },
  );
  const clients = sockets.length + sseClients.length;
  const rssConnected = rssMiB(gatewayPid);
  while (settled.size < CLUSTERS && Date.now() - started < TIMEOUT_MS) await new Promise((r) => setTimeout(r, 200));
  // Stragglers: the last events reach every client.
  await new Promise((r) => setTimeout(r, 1000));
  const seconds = (Date.now() - started) / 1000;
  const rssAfter = rssMiB(gatewayPid);
  const gatewayCpu = round(cpuSeconds(gatewayPid) - cpuBefore, 2);
  const processCpuAfter = cpuWithChildren(processPids);
  loopDelay.disable();
  const clientCpu = process.cpuUsage(benchCpu);
  const machineAfter = machineCpuSeconds();
  delays.sort((a, b) => a - b);
  fromEvent.sort((a, b) => a - b);
  const service = [...serviceDelays.values()].sort((a, b) => a - b);
  const spread = (sorted: number[]) => ({ p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: sorted.at(-1) ?? 0 });

  const results = {
    date: new Date().toISOString(),
    machine: machine(),
    loadAverageAtEnd: loadavg().map((l) => round(l, 2)),
    configuration: {
      gateway: "one gateway process of Corral as `npm start` runs it (services, nats-server, redis-server and provisioner beside it)",
      clients: {
        total: clients,
        webSocketsOnTheWholeTenant: TENANT_SOCKETS,
        webSocketsPerCluster: SOCKETS_PER_CLUSTER,
        sseStreamsPerCluster: SSE_PER_CLUSTER,
        inThisProcess: "every client, in the benchmark's own Node process",
      },
      clusters: CLUSTERS,
      template: "webapp, 2 machines, sim provider, shell actions",
      createConcurrency: CREATE_CONCURRENCY,
      createEveryMs: CREATE_EVERY_MS,
      delay: "receipt time minus resultAt of task.ended (when the worker published the result; same clock), events received live only",
      target: "p99 under 100 ms",
    },
    machineDuringRun: {
      busyCpuSeconds: round(machineAfter.busy - machineBefore.busy, 1),
      idleCpuSeconds: round(machineAfter.idle - machineBefore.idle, 1),
      what: "both cores over the run, every process of the machine (other work on it included): no idle time means every process waited for a core",
    },
    cpuSecondsByProcess: {
      ...Object.fromEntries(Object.keys(processPids).map((name) => [name, round((processCpuAfter[name] ?? 0) - (processCpuBefore[name] ?? 0), 2)])),
      "benchmark (clients and creates)": round((clientCpu.user + clientCpu.system) / 1e6, 2),
      what: "each process's CPU over the run, with the processes it started and waited for (the provisioner's shell actions)",
    },
    clustersSettled: settled.size,
    secondsUntilSettled: round(seconds, 1),
    eventsReceived,
    taskEndsMeasured: delays.length,
    taskEndsReplayedOnConnect: replayedTaskEnds,
    delayMs: spread(delays),
    delaySplitMs: {
      resultToClustersServiceEvent: { ...spread(service), what: "at - resultAt, once per task end: until the results consumer takes the result up (`at`)" },
      clustersServiceEventToClient: { ...spread(fromEvent), what: "receipt - at: a success waits for its node and plan writes (it rides in the plan's progress), a failure not; then the events stream, the gateway and the client" },
    },
    delayByClientMs: Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, { count: v.length, ...spread(v.sort((a, b) => a - b)) }])),
    clientsClosedByTheServer: serverClosed,
    clientProcess: {
      cpuSeconds: round((clientCpu.user + clientCpu.system) / 1e6, 2),
      eventLoopDelayMs: { p50: round(loopDelay.percentile(50) / 1e6, 1), p99: round(loopDelay.percentile(99) / 1e6, 1), max: round(loopDelay.max / 1e6, 1) },
      what: "the clients' own process: a busy event loop delays receipt whatever the gateway does",
    },
    gateway: {
      rssMiB: { beforeClients: rssBefore, withClientsConnected: rssConnected, atEnd: rssAfter },
      cpuSeconds: gatewayCpu,
    },
  };
  console.log(JSON.stringify(results, null, 2));
  if (settled.size < CLUSTERS) throw new Error(`only ${settled.size} of ${CLUSTERS} clusters settled within ${TIMEOUT_MS} ms`);
  mkdirSync(new URL("../results/", import.meta.url), { recursive: true });
  writeFileSync(new URL("../results/gateway-events.json", import.meta.url), JSON.stringify(results, null, 2) + "\n");
} finally {
  for (const s of sseClients) s.close();
  for (const s of sockets) s.close();
  await nc.close();
  await corral.stop();
}
