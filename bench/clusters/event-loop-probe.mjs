// Preloaded into a service process by a benchmark (`node --import=<this file> ...`): measures the process's
// event-loop delay (perf_hooks monitorEventLoopDelay, 10 ms resolution). On SIGUSR2 it writes what it measured since
// the last signal (or its start) to `$BENCH_LOOP_DELAY_DIR/<pid>.json`, then starts over.
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";

const dir = process.env.BENCH_LOOP_DELAY_DIR;
if (dir) {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let seq = 0;
  let since = Date.now();
  const ms = (ns) => Math.round(ns / 1e4) / 100;
  process.on("SIGUSR2", () => {
    const now = Date.now();
    const file = join(dir, `${process.pid}.json`);
    const stats = {
      seq: ++seq,
      seconds: (now - since) / 1000,
      meanMs: ms(histogram.mean),
      p50Ms: ms(histogram.percentile(50)),
      p99Ms: ms(histogram.percentile(99)),
      p999Ms: ms(histogram.percentile(99.9)),
      maxMs: ms(histogram.max),
    };
    writeFileSync(`${file}.tmp`, JSON.stringify(stats));
    renameSync(`${file}.tmp`, file);
    histogram.reset();
    since = now;
  });
}
