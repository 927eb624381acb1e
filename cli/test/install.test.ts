/**
 * The packed tarball installs on its own: `npm pack` bundles the CLI (prepack), `npm install -g` of the tarball
 * into a scratch prefix needs no registry and no repository, and the installed `corral` runs: its command list
 * (derived from the endpoint table), settings, and a call that reaches no server (exit 4).
 */
import test from "ava";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createServer } from "node:net";
import { promisify } from "node:util";
import { runCorral, scratchDir, shown } from "./helpers/run-corral.js";

const run = promisify(execFile);
const cliDir = fileURLToPath(new URL("..", import.meta.url));

test("install - the packed tarball installs with npm install -g and runs without the repository", async (t) => {
  const scratch = await scratchDir();
  t.teardown(() => scratch.remove());
  const npmEnv = { ...process.env, npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" };
  const packed = await run("npm", ["pack", "--pack-destination", scratch.dir, "--json"], { cwd: cliDir, env: npmEnv });
  const [{ filename, files }] = JSON.parse(packed.stdout) as [{ filename: string; files: Array<{ path: string }> }];
  t.deepEqual(files.map((f) => f.path).sort(), ["bin/corral.mjs", "dist/corral.mjs", "package.json"], "bin, bundle and manifest only");
  t.false(existsSync(join(cliDir, "dist")), "postpack removed the bundle from the repository");

  const prefix = join(scratch.dir, "prefix");
  await run("npm", ["install", "-g", "--offline", "--prefix", prefix, join(scratch.dir, filename)], { cwd: scratch.dir, env: npmEnv });
  const bin = join(prefix, "bin", "corral");
  const env = { CORRAL_CLI_CONFIG: scratch.profile };

  const help = await runCorral(["help"], { bin, env });
  t.is(help.code, 0, shown(help));
  t.regex(help.stdout, /^ {2}clusters services restart <id> \[service\] +POST \/clusters\/:id\/services\/restart/m);

  const settings = await runCorral(["config", "show", "-o", "json", "--user", "alice", "--tenant", "acme"], { bin, env });
  t.is(settings.code, 0, shown(settings));
  t.like(JSON.parse(settings.stdout), { url: "http://localhost:55054/v2", user: "alice", tenant: "acme", sources: { user: "flag", url: "default" } });

  const port = await closedPort();
  const unreachable = await runCorral(["status", "--url", `127.0.0.1:${port}`, "--user", "alice", "--tenant", "acme"], { bin, env });
  t.is(unreachable.code, 4, shown(unreachable));
  t.is(
    unreachable.stderr,
    `corral: cannot reach http://127.0.0.1:${port}/v2/clusters: ECONNREFUSED; is Corral running there (npm start)? ` +
      "The URL comes from --url, CORRAL_URL or the profile (corral config show)\n",
  );
});

/** A loopback port nothing listens on (taken, then let go). */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}
