/**
 * Where a process spent its time: reads the `.cpuprofile` files of a directory (as written by
 * `BENCH_PROFILE_DIR=<dir> throughput.ts`) and prints, for each profile whose code includes `--match`, the
 * functions with the most self time and the files with the most self time.
 * Run: node --import=tsx bench/gateway/profile-summary.ts <dir> [--match services/gateway/src] [--top 25]
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { match: { type: "string", default: "services/" }, top: { type: "string", default: "25" } },
});
const dir = positionals[0];
if (!dir) throw new Error("usage: profile-summary.ts <dir> [--match text] [--top n]");
const top = Number(values.top);

/** Self microseconds per key of each sample's node. */
function selfTime(profile: CpuProfile, keyOf: (node: ProfileNode) => string): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const out = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    if (!node) return;
    const key = keyOf(node);
    out.set(key, (out.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return out;
}

const shortUrl = (url: string) => url.replace(/^file:\/\/.*?\/(node_modules|services|shared|deploy|provisioner)\//, "$1/") || "(native)";

function print(title: string, times: Map<string, number>, total: number): void {
  console.log(`  ${title}`);
  for (const [key, us] of [...times].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`    ${((100 * us) / total).toFixed(1).padStart(5)}%  ${key}`);
  }
}

for (const file of readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"))) {
  const profile = JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile;
  if (!profile.nodes.some((n) => n.callFrame.url.includes(values.match))) continue;
  const total = profile.timeDeltas.reduce((a, b) => a + b, 0);
  const idle = selfTime(profile, (n) => n.callFrame.functionName).get("(idle)") ?? 0;
  console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled, ${((100 * (total - idle)) / total).toFixed(0)}% busy`);
  print("self time by function", selfTime(profile, (n) => `${n.callFrame.functionName || "(anonymous)"} ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`), total);
  print("self time by file", selfTime(profile, (n) => shortUrl(n.callFrame.url)), total);
}
