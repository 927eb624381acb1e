/**
 * How many containers to start at once: the docker floor (floors.ts) of BENCH_NODES containers started 4, 8, 16,
 * 32 and all at a time, the arms alternated over BENCH_ROUNDS rounds on the shared machine. It tells whether the
 * `docker` provider's CREATEs, which a provisioner runs as many at once as the tenant has workers, gain from a bound
 * on the container starts in flight per Docker host.
 *
 * Run: node --import=tsx bench/providers/floor-concurrency.ts -> bench/results/providers-floor-concurrency.json
 * Env: BENCH_NODES (50), BENCH_ROUNDS (3), BENCH_CONCURRENCY ("4,8,16,32,50")
 */
import { createTestNetwork, ensureDockerForTests, removeTestContainers, TEST_LABEL } from "../../test/helpers/docker-hosts.js";
import { waitForQuietMachine } from "../clusters/lib.js";
import { loadSnapshot, log, machine, writeResult } from "../real-machines/lib.js";
import { dockerFloor, type FloorResult } from "./floors.js";
import { median } from "../stats.js";

const NODES = Number(process.env["BENCH_NODES"] ?? 50);
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 3);
const ARMS = (process.env["BENCH_CONCURRENCY"] ?? "4,8,16,32,50").split(",").map(Number);

const image = await ensureDockerForTests();
const network = await createTestNetwork(`corral-bench-floor-${process.pid}`);
const [key, value] = TEST_LABEL.split("=") as [string, string];
const loadBefore = await loadSnapshot();
const results = new Map<number, FloorResult[]>();
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const concurrency of round % 2 ? [...ARMS].reverse() : ARMS) {
      await waitForQuietMachine(20_000);
      const floor = await dockerFloor(NODES, { image, network: network.name, flavor: "1x256m", label: { [key]: value, "corral.test.pid": String(process.pid) }, concurrency });
      log(`${NODES} containers, ${concurrency} at a time: ${floor.seconds} s to the last greeting`);
      results.set(concurrency, [...(results.get(concurrency) ?? []), floor]);
    }
  }
  writeResult("providers-floor-concurrency.json", {
    date: new Date().toISOString(),
    machine: machine(),
    loadBefore,
    loadAfter: await loadSnapshot(),
    nodes: NODES,
    rounds: ROUNDS,
    byConcurrency: ARMS.map((concurrency) => ({
      concurrency,
      medianSeconds: median((results.get(concurrency) ?? []).map((f) => f.seconds)),
      seconds: (results.get(concurrency) ?? []).map((f) => f.seconds),
    })),
  });
} finally {
  await network.remove().catch(() => undefined);
  await removeTestContainers();
}
process.exit(0);
