// Preloaded into every process of a profiled benchmark run (NODE_OPTIONS=--import=<this file>; Node 20 refuses
// --cpu-prof there): profiles the process from its start and writes <BENCH_PROFILE_DIR>/<pid>.cpuprofile on exit.
// Plain JS so it loads before tsx.
import { Session } from "node:inspector";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.env.BENCH_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.start");
  // The main thread's session answers synchronously, so the profile is written before the process ends.
  process.on("exit", () => {
    session.post("Profiler.stop", (err, result) => {
      if (!err) writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
