/**
 * `npm start` with `nats.embedded.nodes=3`: a local three-node JetStream cluster, state at replicas 3, every
 * process given all three URLs, and clusters created end to end through the REST API, also after one nats-server
 * was SIGKILLed (the launcher starts it again).
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { promisify } from "node:util";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { jetstreamManager } from "@nats-io/jetstream";
import { buckets, kvStream, PROVISIONER_INBOX_PREFIX, splitServerList } from "@corral/contracts";
import { connectNats } from "@corral/shared";
import { freePort } from "@corral/deploy";
import { createCluster, createClusterCatalog, waitForStatus } from "../../test/helpers/cluster-fixture.js";
import { eventually } from "../../test/helpers/eventually.js";
import { startLauncher } from "../../test/helpers/launcher.js";

const run = promisify(execFile);

/** Pids of the nats-servers the launcher runs (its direct children). */
async function natsServerChildren(parent: number): Promise<number[]> {
  const { stdout } = await run("ps", ["-o", "pid=,comm=", "--ppid", String(parent)]);
  return stdout
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter(([, comm]) => comm === "nats-server")
    .map(([pid]) => Number(pid));
}

async function natsUrlIn(file: string): Promise<string> {
  const line = (await readFile(file, "utf8")).split("\n").find((l) => l.startsWith("nats.url="));
  if (!line) throw new Error(`${file} has no nats.url`);
  return line.slice("nats.url=".length);
}

test("launcher cluster - nats.embedded.nodes=3 runs a three-node JetStream cluster at replicas 3 that serves cluster creates, also after a node's SIGKILL", async (t) => {
  const parent = await mkdtemp(join(tmpdir(), "corral-launcher-cluster-"));
  const dataDir = join(parent, "data");
  const apiPort = await freePort();
  const launcher = await startLauncher({
    dataDir,
    apiPort,
    env: { CORRAL_NATS_EMBEDDED_NODES: "3", CORRAL_NATS_SYNCALWAYS: "false" },
    timeoutMs: 90_000,
  });
  try {
    t.true(
      launcher.lines.some((l) => l.includes("3 nats-servers as a JetStream cluster")),
      `the launcher says it runs a cluster:\n${launcher.lines.join("\n")}`,
    );
    // Provisioners, like the services, are handed every node.
    const url = await natsUrlIn(join(dataDir, "provisioner.properties"));
    t.is(splitServerList(url).servers.length, 3);
    const nc = await connectNats({ url, name: "test-provisioner", inboxPrefix: PROVISIONER_INBOX_PREFIX });
    try {
      const info = await (await jetstreamManager(nc)).streams.info(kvStream(buckets.provisioners));
      t.is(info.config.num_replicas, 3, "buckets get three replicas on a three-node cluster");
    } finally {
      await nc.close();
    }

    const baseUrl = `http://127.0.0.1:${apiPort}/v2`;
    const catalog = await createClusterCatalog(baseUrl, { workers: 2, services: [{ name: "base", actions: { install: "true", start: "true" } }] });
    const id = await createCluster(baseUrl, catalog, 2);
    await waitForStatus(baseUrl, catalog, id, "active", 60_000);

    // A node SIGKILLed under the running system: the launcher starts it again, and the system keeps serving.
    const killedAt = Date.now();
    const nodePids = await natsServerChildren(launcher.child.pid ?? -1);
    t.is(nodePids.length, 3, "the launcher runs three nats-servers");
    process.kill(nodePids[1] ?? -1, "SIGKILL");
    await eventually(() => launcher.lines.some((l) => /nats-server n\d is back/.test(l)), {
      what: "the launcher to start the killed node again",
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    t.is((await natsServerChildren(launcher.child.pid ?? -1)).length, 3);
    t.log(`node back ${Date.now() - killedAt} ms after the kill`);
    // Streams whose leader was on the killed node refuse writes until they elect another: a 503 "try again" meanwhile.
    const second = await eventually(() => createCluster(baseUrl, catalog, 2), {
      what: "a cluster create after the kill",
      timeoutMs: 30_000,
      intervalMs: 500,
    });
    await waitForStatus(baseUrl, catalog, second, "active", 60_000);
    t.log(`second cluster active ${Date.now() - killedAt} ms after the kill`);
    t.is(await launcher.stop(), 0, "stopping exits 0");
  } finally {
    await launcher.stop();
    await rm(parent, { recursive: true, force: true });
  }
});
