/** `npm run deploy-config` arguments: host specs and what a malformed one is told. */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import test from "ava";
import { parseNode } from "../src/deploy-config.js";
import { repoRoot } from "../src/paths.js";

test("deploy config args - a host with none, some or all of its ports", (t) => {
  t.deepEqual(parseNode("corral-1"), { host: "corral-1", clientPort: 4222, routePort: 6222, monitorPort: 8222 });
  t.deepEqual(parseNode("10.0.0.5:14222"), { host: "10.0.0.5", clientPort: 14222, routePort: 6222, monitorPort: 8222 });
  t.deepEqual(parseNode("h:1::3"), { host: "h", clientPort: 1, routePort: 6222, monitorPort: 3 });
});

test("deploy config args - a malformed host names the part that is wrong", (t) => {
  t.throws(() => parseNode(""), { message: /"" is not host\[:clientPort/ });
  t.throws(() => parseNode("h:1:2:3:4"), { message: /"h:1:2:3:4" is not host\[:clientPort/ });
  t.throws(() => parseNode("h:70000"), { message: /port "70000" of "h:70000" is not a port number/ });
  t.throws(() => parseNode("h:x"), { message: /port "x" of "h:x" is not a port number/ });
});

test("deploy config args - the command without --out exits 2 with what is missing and the usage", async (t) => {
  const run = promisify(execFile);
  const err = await t.throwsAsync(run(process.execPath, ["--import=tsx", "deploy/bin/deploy-config.ts", "--hosts", "a,b,c"], { cwd: repoRoot }));
  const failed = err as Error & { code?: number; stderr?: string };
  t.is(failed.code, 2);
  t.regex(failed.stderr ?? "", /--hosts and --out are required[\s\S]*usage: npm run deploy-config/);
});
