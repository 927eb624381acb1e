import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import test, { type ExecutionContext } from "ava";
import { defaultStateDir, ensureDocker, freePort, repoRoot } from "@corral/deploy";
import { ensureInstalled, which } from "../src/binaries.js";
import { dockerRequest } from "../src/docker.js";
import { buildCorralImage } from "../src/docker-image.js";
import { restClient } from "../src/rest-client.js";
import { eventually } from "../../test/helpers/eventually.js";

const exec = promisify(execFile);
const composeFile = join(repoRoot, "deploy", "docker", "compose.yaml");
const project = `corraltest${process.pid}`;
const image = `corral/corral:test-${process.pid}`;

/** `docker-compose -p <project> -f deploy/docker/compose.yaml <args>`, with the image and API port of this test. */
async function compose(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const bin = await ensureInstalled(defaultStateDir(), ["docker-compose"], () => which("docker-compose"));
  const { stdout, stderr } = await exec(bin, ["-p", project, "-f", composeFile, ...args], { env, maxBuffer: 16 * 1024 * 1024, timeout: 600_000 });
  return stdout + stderr;
}

async function projectContainers(): Promise<string[]> {
  const filters = JSON.stringify({ label: [`com.docker.compose.project=${project}`] });
  const res = await dockerRequest("GET", `/containers/json?all=1&filters=${encodeURIComponent(filters)}`);
  return (JSON.parse(res.body) as { Id: string }[]).map((c) => c.Id);
}

let composeEnv: NodeJS.ProcessEnv | undefined;

/** Containers, networks and volumes of the project, then the image: whatever the test got to make. */
async function removeEverything(): Promise<void> {
  if (composeEnv) {
    await compose(["down", "--volumes", "--remove-orphans", "--timeout", "5"], composeEnv).catch(() => undefined);
  }
  await dockerRequest("DELETE", `/images/${image}?force=1`).catch(() => undefined);
}

test.after.always(removeEverything);

test("docker - the image runs the whole system with compose: the API answers and a sim cluster reaches active", async (t) => {
  t.timeout(20 * 60_000); // a first build of the base image runs debootstrap
  await ensureDocker({ log: (line) => t.log(line) });
  const started = Date.now();
  await buildCorralImage({ tag: image, log: (line) => t.log(line) });
  t.log(`image ready in ${Math.round((Date.now() - started) / 1000)} s`);

  const port = await freePort();
  composeEnv = { ...process.env, CORRAL_IMAGE: image, CORRAL_HTTP_PORT: String(port) };
  await compose(["up", "--detach", "--no-build"], composeEnv);
  try {
    await runsTheSystem(t, port, composeEnv);
  } catch (err) {
    t.log(await compose(["logs", "--no-color", "--tail=15"], composeEnv).catch(String));
    throw err;
  }
  await compose(["down", "--volumes", "--remove-orphans", "--timeout", "5"], composeEnv);
  t.deepEqual(await projectContainers(), [], "compose down removed every container");
});

/** The API answers, every service is up, and a cluster of three sim machines reaches active; Redis keeps its AOF. */
async function runsTheSystem(t: ExecutionContext, port: number, env: NodeJS.ProcessEnv): Promise<void> {
  const api = `http://127.0.0.1:${port}/v2`;
  // Docker's port proxy accepts connections before the gateway listens, and may hold them: each try has a deadline.
  const answers = async () => (await fetch(`${api}/status`, { signal: AbortSignal.timeout(5_000) })).status === 200;
  const status = await eventually(answers, { what: `${api}/status answers 200`, timeoutMs: 240_000, intervalMs: 500 });
  t.true(status);

  const corral = restClient(api, { "Service-UserID": "admin", "Service-TenantID": "superadmin" });
  // The provisioner registers provider sim once it has connected with its own NATS user.
  await eventually(() => corral.call("plugins.getType", { params: { type: "providertypes", plugin: "sim" } }), {
    what: "provider type sim is registered",
    timeoutMs: 120_000,
    intervalMs: 500,
  });
  // Every service answers once each has connected: the API's /status is the gateway's alone.
  await eventually(() => corral.call("clusters.list"), { what: "the clusters service answers", timeoutMs: 120_000, intervalMs: 500 });
  await corral.call("tenancy.import", { body: JSON.parse(await readFile(join(repoRoot, "deploy", "examples", "quickstart-catalog.json"), "utf8")) });
  const created = await corral.call("clusters.create", { body: { name: "compose", clusterTemplate: "webstack", numMachines: 3 } });
  if (!("id" in created)) throw new Error(`POST /clusters answered without an id: ${JSON.stringify(created)}`);
  const final = await eventually(
    async () => {
      const s = await corral.call("clusters.status", { params: { id: created.id } });
      return s.status === "pending" ? false : s.status;
    },
    { what: `cluster ${created.id} settles`, timeoutMs: 240_000, intervalMs: 500 },
  );
  t.is(final, "active");

  // Redis keeps an append-only file fsynced every second (deploy/redis/redis.conf), under its volume.
  const redisId = (await compose(["ps", "-q", "redis"], env)).trim();
  const aof = await exec("docker", ["exec", redisId, "ls", "/var/lib/corral/redis/appendonlydir"]);
  t.regex(aof.stdout, /appendonly\.aof\.\d+\.incr\.aof/);
}
