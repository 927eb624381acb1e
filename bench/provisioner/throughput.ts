/**
 * Provisioner throughput. Run: `node --import=tsx bench/provisioner/throughput.ts [tasks]`
 * Writes bench/results/provisioner-throughput.json and prints a summary.
 *
 * One provisioner (in this process, its own NATS connection) with 10 worker loops for one tenant drains a backlog
 * of tasks published beforehand: sim CREATE with zero delay, and shell `true` (a process spawn per task). Each
 * task is pull -> run -> publish the result (JetStream, with message id) -> ack. Measured with JetStream
 * `sync_interval: always` (the default) and without it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { startNats } from "@corral/deploy";
import {
  ASSIGNMENT_KEY,
  buckets,
  encode,
  streams,
  taskSubject,
  taskMessageId,
  type TaskMessage,
} from "@corral/contracts";
import {
  connectNats,
  ensureStreams,
  ensureTaskConsumer,
  openBucket,
  silentLogger,
} from "@corral/shared";
import { startProvisioner } from "@corral/provisioner";

const here = dirname(fileURLToPath(import.meta.url));
const OUT = join(here, "../results/provisioner-throughput.json");
const TASKS = Number(process.argv[2] ?? 5000);
const LOOPS = 10;

type Kind = "sim" | "shell";

function task(tenant: string, i: number, kind: Kind): TaskMessage {
  return {
    tenant,
    clusterId: "00000001",
    planId: "00000001-001",
    taskId: `00000001-001-${i}`,
    dispatch: 1,
    taskName: kind === "sim" ? "CREATE" : "INSTALL",
    nodeId: `node-${i}`,
    submitTime: Date.now(),
    config: {
      cluster: {},
      hostname: `bench-${1000 + i}.local`,
      ipaddresses: {},
      nodenum: 1000 + i,
      hardwaretype: "small",
      imagetype: "ubuntu",
      services: kind === "shell" ? ["s"] : [],
      automators: kind === "shell" ? ["shell"] : [],
      provider: { name: "sim", providertype: "sim", provisioner: {} },
      ...(kind === "shell" ? { service: { name: "s", action: { type: "shell", fields: { script: "true" } } } } : {}),
      results: {},
    },
  };
}

async function scenario(syncAlways: boolean, kind: Kind, count: number) {
  const nats = await startNats({ jetstream: true, syncAlways });
  const workDir = mkdtempSync(join(tmpdir(), "corral-bench-prov-"));
  const nc = await connectNats({ url: nats.url, name: "bench-publisher" });
  const pnc = await connectNats({ url: nats.url, name: "bench-provisioner" });
  try {
    await ensureStreams(nc);
    const tenant = "bench";
    const consumer = await ensureTaskConsumer(nc, tenant);
    const js = jetstream(nc);
    const publishStart = performance.now();
    const inFlight: Promise<unknown>[] = [];
    for (let i = 0; i < count; i++) {
      const t = task(tenant, i, kind);
      inFlight.push(js.publish(taskSubject(tenant), encode(t), { msgID: taskMessageId(t.taskId, t.dispatch) }));
      if (inFlight.length >= 256) await Promise.all(inFlight.splice(0));
    }
    await Promise.all(inFlight);
    const publishMs = performance.now() - publishStart;

    const provisioner = await startProvisioner({ nc: pnc, log: silentLogger, id: "bench-prov", capacity: LOOPS, workDir });
    const jsm = await jetstreamManager(nc);
    const started = performance.now();
    await (await openBucket(nc, buckets.assignments)).put(ASSIGNMENT_KEY, encode({ "bench-prov": { [tenant]: LOOPS } }));
    for (;;) {
      const info = await jsm.consumers.info(streams.tasks, consumer);
      if (info.num_pending === 0 && info.num_ack_pending === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const ms = performance.now() - started;
    const results = (await jsm.streams.info(streams.results)).state.messages;
    await provisioner.stop();
    if (results !== count) throw new Error(`expected ${count} results, found ${results}`);
    return {
      tasks: count,
      workerLoops: LOOPS,
      tasksPerSecond: Math.round((count / ms) * 1000),
      drainSeconds: +(ms / 1000).toFixed(2),
      backlogPublishPerSecond: Math.round((count / publishMs) * 1000),
    };
  } finally {
    await pnc.drain().catch(() => {});
    await nc.drain().catch(() => {});
    await nats.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

const out = {
  date: new Date().toISOString(),
  machine: `${cpus().length} cores (nats-server, the provisioner and the publisher share them)`,
  loadAverageAtStart: +(loadavg()[0] ?? 0).toFixed(2),
  note: "one provisioner, 10 worker loops, one tenant; each task: pull, run, publish result (msg id), ack",
  simCreateZeroDelay: {
    syncAlways: await scenario(true, "sim", TASKS),
    syncDefault: await scenario(false, "sim", TASKS),
  },
  shellTrue: {
    syncAlways: await scenario(true, "shell", Math.min(TASKS, 1000)),
    syncDefault: await scenario(false, "shell", Math.min(TASKS, 1000)),
  },
};
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, JSON.stringify(out, null, 2) + "\n");
console.log(JSON.stringify(out, null, 2));
