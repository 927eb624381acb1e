/**
 * The 50-node docker target of time-to-active.ts on an earlier revision and on this one, alternated round by round
 * on the shared machine (each round: the revision's own warm-up, floor and cluster), so both see the same machine.
 * The earlier revision is a tree of its own, for example the commit before the provider-path changes:
 *
 *   mkdir -p /tmp/before && git archive <commit> | tar -x -C /tmp/before
 *   mkdir /tmp/before/node_modules && for e in node_modules/* node_modules/.bin; do [ "$(basename $e)" = @corral ] ||
 *     ln -s "$PWD/$e" /tmp/before/node_modules/; done
 *   mkdir /tmp/before/node_modules/@corral && for e in node_modules/@corral/*; do ln -s "$(readlink $e)" /tmp/before/$e; done
 *   mkdir -p /tmp/before/.corral /tmp/before/bench/providers && ln -s "$PWD/.corral/bin" /tmp/before/.corral/bin
 *   cp bench/providers/*.ts /tmp/before/bench/providers/
 *
 * Run: BENCH_BEFORE=/tmp/before BENCH_BEFORE_LABEL=<commit> node --import=tsx bench/providers/before-after.ts
 *      -> bench/results/providers-before-after.json
 * Env: BENCH_ROUNDS (3), BENCH_TARGET_NODES (50)
 */
import { execFile } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { loadSnapshot, log, machine, round, writeResult } from "../real-machines/lib.js";
import { median } from "../stats.js";

const run = promisify(execFile);
const BEFORE = process.env["BENCH_BEFORE"];
if (!BEFORE) throw new Error("BENCH_BEFORE: the directory of the earlier revision's tree");
const BEFORE_LABEL = process.env["BENCH_BEFORE_LABEL"] ?? BEFORE;
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 3);
const NODES = Number(process.env["BENCH_TARGET_NODES"] ?? 50);
const HERE = new URL("../..", import.meta.url).pathname;
const OUT = `providers-before-after-round.json`;

interface TargetRound {
  secondsToActive: number;
  floorSeconds: number;
  ratioToFloor: number;
  providerCriticalPathSeconds: number;
  automatorCriticalPathSeconds: number;
  dispatchWaitSeconds: number;
}

/** One round of the target in the tree at `dir`: its result. */
async function targetRound(dir: string): Promise<TargetRound & { stages: string }> {
  const env = { ...process.env, BENCH_PROVIDERS: "docker", BENCH_SIZES: "", BENCH_TARGET_NODES: String(NODES), BENCH_TARGET_ROUNDS: "1", BENCH_OUT: OUT };
  await run("node", ["--import=tsx", "bench/providers/time-to-active.ts"], { cwd: dir, env, maxBuffer: 64 << 20, timeout: 900_000 });
  const file = join(dir, "bench", "results", OUT);
  const result = JSON.parse(await readFile(file, "utf8")) as {
    target: { rounds: TargetRound[] };
    runs: Array<{ nodes: number; create: { stages: Array<{ taskNames: string[]; dispatchWaitMs: number; runningMs: number }> } }>;
  };
  await rm(file, { force: true });
  const last = result.runs.filter((r) => r.nodes === NODES).at(-1);
  const stages = last?.create.stages.map((s) => `${s.taskNames.join(",")} ${s.dispatchWaitMs}+${s.runningMs}`).join(" | ") ?? "";
  return { ...result.target.rounds[0]!, stages };
}

const loadBefore = await loadSnapshot();
const arms = { before: [] as Array<TargetRound & { stages: string }>, after: [] as Array<TargetRound & { stages: string }> };
for (let r = 0; r < ROUNDS; r++) {
  for (const arm of r % 2 ? (["after", "before"] as const) : (["before", "after"] as const)) {
    const result = await targetRound(arm === "before" ? BEFORE : HERE);
    arms[arm].push(result);
    log(`${arm}: ${result.secondsToActive} s to active, floor ${result.floorSeconds} s (${result.ratioToFloor}x)`);
  }
}
const summary = (xs: TargetRound[]) => ({
  medianSecondsToActive: median(xs.map((x) => x.secondsToActive)),
  medianFloorSeconds: median(xs.map((x) => x.floorSeconds)),
  medianRatioToFloor: round(median(xs.map((x) => x.ratioToFloor)), 2),
  rounds: xs,
});
writeResult("providers-before-after.json", {
  date: new Date().toISOString(),
  machine: machine(),
  loadBefore,
  loadAfter: await loadSnapshot(),
  nodes: NODES,
  before: { revision: BEFORE_LABEL, ...summary(arms.before) },
  after: { revision: (await run("git", ["rev-parse", "--short", "HEAD"], { cwd: HERE }).catch(() => ({ stdout: "" }))).stdout.trim(), ...summary(arms.after) },
});
process.exit(0);
