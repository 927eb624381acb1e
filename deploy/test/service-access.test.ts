/**
 * The per-service bus access table (deploy/src/service-access.ts) against the services' sources: the endpoints each
 * calls and the buckets it opens itself are in its row, so a new call or bucket cannot ship without its permission.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import test from "ava";
import { buckets, endpoints, type EndpointName } from "@corral/contracts";
import { repoRoot } from "../src/paths.js";
import { CORRAL_SERVICES, SERVICE_ACCESS } from "../src/service-access.js";

async function sourcesOf(service: string): Promise<string> {
  const dir = join(repoRoot, "services", service, "src");
  const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith(".ts"));
  return (await Promise.all(files.map((f) => readFile(join(dir, f), "utf8")))).join("\n");
}

const matches = (text: string, pattern: RegExp) => new Set([...text.matchAll(pattern)].map((m) => m[1] ?? ""));

for (const service of CORRAL_SERVICES) {
  test(`service access - ${service}: every endpoint it calls and bucket it opens is in its row`, async (t) => {
    const text = await sourcesOf(service);
    const access = SERVICE_ACCESS[service];
    const called = [...matches(text, /callEndpoint\([^,]+,\s*"([\w.]+)"/g)] as EndpointName[];
    const allowed = (name: EndpointName) => (access.calls === "rest" ? endpoints[name].rest !== undefined : access.calls.includes(name));
    t.deepEqual(called.filter((name) => !allowed(name)), [], "endpoints it calls without permission");
    const opened = [...matches(text, /openBucket\([^,]+,\s*buckets\.(\w+)/g)].map((k) => buckets[k as keyof typeof buckets]);
    const reachable = new Set<string>([...access.kv.read, ...access.kv.write]);
    t.deepEqual(opened.filter((bucket) => !reachable.has(bucket)), [], "buckets it opens without permission");
  });
}
