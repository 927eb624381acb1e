/**
 * What each part of the compare-and-set helper (shared/src/kv.ts `modifyValue`) buys, on one nats-server
 * (lazy fsync) with this process as the only client:
 * - turns (`KeyTurns`): many writers of one key in this process, with and without taking turns, and the cost of
 *   turn-taking where writers never share a key (the clusters service's node and plan writes);
 * - the cached guess (`RevisionCache`): modifies of keys this process wrote last, with and without the cache;
 * - the transport: reads and writes through the helpers (js-requests.ts) beside nats.js's own KV calls.
 * Each case: wall time and this process's CPU time per operation, and messages the server received per operation
 * (setup, such as writing the keys first, not counted). Diagnostic; writes bench/results/clusters-compare-and-set.json.
 *
 * Run: node --import=tsx bench/clusters/compare-and-set.ts
 * Env: BENCH_ROUNDS (5: each case is run this many times, the median is reported)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { startNats } from "@corral/deploy";
import { encode } from "@corral/contracts";
import {
  connectNats,
  KeyTurns,
  mapLimit,
  modifyValue,
  openBucket,
  putValue,
  readValue,
  RevisionCache,
  type KV,
  type ModifyOptions,
} from "@corral/shared";
import { machine, round } from "./lib.js";

const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 5);

interface Measured {
  msPerOp: number;
  /** CPU of this process (the client side), µs per operation. */
  cpuUsPerOp: number;
  serverMessagesPerOp: number;
  /** Times `modify` decided, per operation (1: decided once; more: conflicts or stale guesses). */
  decisionsPerOp?: number;
}

const nats = await startNats({ jetstream: true, syncAlways: false });
const nc = await connectNats({ url: nats.url, name: "bench-compare-and-set" });
const inMsgs = async () => ((await (await fetch(`${nats.monitorUrl}/varz`)).json()) as { in_msgs: number }).in_msgs;
let bucketNumber = 0;
const freshBucket = () => openBucket(nc, `bench_cas_${++bucketNumber}`);

interface Case {
  ops: number;
  /** Runs first, unmeasured; what it answers is handed to `run`. */
  setup?: (kv: KV) => Promise<RevisionCache | undefined>;
  run: (kv: KV, decided: () => void, cache: RevisionCache | undefined) => Promise<unknown>;
}

/** Runs a case ROUNDS times, each on a fresh bucket; answers the median round by wall time. */
async function measure({ ops, setup, run }: Case): Promise<Measured> {
  const rounds: Measured[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const kv = await freshBucket();
    const cache = await setup?.(kv);
    let decisions = 0;
    const before = await inMsgs();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await run(kv, () => void decisions++, cache);
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    // The monitoring request itself is not a client message: the difference is the body's.
    rounds.push({
      msPerOp: round(ms / ops, 3),
      cpuUsPerOp: round((cpu.user + cpu.system) / ops, 1),
      serverMessagesPerOp: round(((await inMsgs()) - before) / ops, 2),
      ...(decisions > 0 ? { decisionsPerOp: round(decisions / ops, 2) } : {}),
    });
  }
  rounds.sort((a, b) => a.msPerOp - b.msPerOp);
  return rounds[Math.floor(rounds.length / 2)] as Measured;
}

const increment = (decided: () => void) => (current: { value: number } | undefined) => {
  decided();
  return { put: (current?.value ?? 0) + 1 };
};

/** `writers` concurrent increments of one key this process wrote, sharing one cache (as the callers of one store do). */
const sameKey = (writers: number, options: (cache: RevisionCache) => ModifyOptions): Case => ({
  ops: writers,
  setup: async (kv) => {
    const cache = new RevisionCache();
    await putValue(kv, "k", 0, cache);
    return cache;
  },
  run: (kv, decided, cache) =>
    Promise.all(Array.from({ length: writers }, () => modifyValue<number>(kv, "k", increment(decided), options(cache!)))),
});

/** `count` increments of distinct keys this process wrote before, 64 in flight (the node writes of results). */
const distinctKeys = (count: number, options: (cache: RevisionCache) => ModifyOptions): Case => {
  const keys = Array.from({ length: count }, (_, i) => `n${i}`);
  return {
    ops: count,
    setup: async (kv) => {
      const cache = new RevisionCache(count * 2);
      await mapLimit(keys, 64, (key) => putValue(kv, key, 0, cache));
      return cache;
    },
    run: (kv, decided, cache) => mapLimit(keys, 64, (key) => modifyValue<number>(kv, key, increment(decided), options(cache!))),
  };
};

const inFlight = (ops: number, fn: (i: number) => Promise<unknown>) => mapLimit(Array.from({ length: ops }, (_, i) => i), 64, fn);

const written = async (kv: KV) => {
  await putValue(kv, "r", { n: 1 });
  return undefined;
};

/** Turns shared by every writer of a case (each case uses fresh keys, so sharing across cases changes nothing). */
const turnsOfThisCase = new KeyTurns();
const SAME_KEY_WRITERS = 20;
const DISTINCT = 2_000;
const TRANSPORT_OPS = 2_000;

const results = {
  date: new Date().toISOString(),
  machine: machine(),
  rounds: ROUNDS,
  turns: {
    sameKey: {
      writers: SAME_KEY_WRITERS,
      note: "one key, this many concurrent increments in one process, each caller with a cache",
      takingTurns: await measure(sameKey(SAME_KEY_WRITERS, (cache) => ({ cache, turns: turnsOfThisCase }))),
      racing: await measure(sameKey(SAME_KEY_WRITERS, (cache) => ({ cache, turns: false }))),
    },
    distinctKeys: {
      modifies: DISTINCT,
      note: "keys this process wrote, 64 in flight, cache on: the cost of turn-taking where nobody waits",
      takingTurns: await measure(distinctKeys(DISTINCT, (cache) => ({ cache, turns: turnsOfThisCase }))),
      racing: await measure(distinctKeys(DISTINCT, (cache) => ({ cache, turns: false }))),
    },
  },
  cachedGuess: {
    modifies: DISTINCT,
    note: "keys this process wrote last, 64 in flight: from the cached value, or from a read",
    withCache: await measure(distinctKeys(DISTINCT, (cache) => ({ cache }))),
    withoutCache: await measure(distinctKeys(DISTINCT, () => ({}))),
  },
  transport: {
    operations: TRANSPORT_OPS,
    note: "64 in flight; helpers: readValue/putValue over js-requests; nats.js: kv.get/kv.put",
    readsHelpers: await measure({ ops: TRANSPORT_OPS, setup: written, run: (kv) => inFlight(TRANSPORT_OPS, () => readValue(kv, "r")) }),
    readsNatsJs: await measure({ ops: TRANSPORT_OPS, setup: written, run: (kv) => inFlight(TRANSPORT_OPS, () => kv.get("r")) }),
    writesHelpers: await measure({ ops: TRANSPORT_OPS, run: (kv) => inFlight(TRANSPORT_OPS, (i) => putValue(kv, `w${i % 100}`, i)) }),
    writesNatsJs: await measure({ ops: TRANSPORT_OPS, run: (kv) => inFlight(TRANSPORT_OPS, (i) => kv.put(`w${i % 100}`, encode(i))) }),
  },
  loadAverageAtEnd: loadavg().map((x) => round(x, 2)),
};

mkdirSync(new URL("../results/", import.meta.url), { recursive: true });
writeFileSync(new URL("../results/clusters-compare-and-set.json", import.meta.url), JSON.stringify(results, null, 2) + "\n");
console.log(JSON.stringify(results, null, 2));
await nc.drain();
await nats.stop();
process.exit(0);
