import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { DOCKER_SPEC } from "@corral/provisioner";
import {
  clusterFilter,
  containerName,
  defaultSocketPath,
  demuxLogs,
  DockerApiError,
  DockerClient,
  dockerSettings,
  DockerTimeoutError,
  DockerUnreachableError,
  every,
  hostnameParts,
  LABEL,
  MANAGED_BY,
  nodeFilter,
  nodeLabels,
  parseFlavor,
} from "@corral/provisioner/testing";

/** The docker provider's parts that need no Docker daemon. */

test("flavor - <cpus>x<memory> becomes NanoCpus and Memory", (t) => {
  t.deepEqual(parseFlavor("1x512m"), { ok: true, limits: { nanoCpus: 1e9, memoryBytes: 512 * 1024 ** 2 } });
  t.deepEqual(parseFlavor("2x4g"), { ok: true, limits: { nanoCpus: 2e9, memoryBytes: 4 * 1024 ** 3 } });
  t.deepEqual(parseFlavor("0.5x256m"), { ok: true, limits: { nanoCpus: 5e8, memoryBytes: 256 * 1024 ** 2 } });
  t.deepEqual(parseFlavor(" 2X1.5G "), { ok: true, limits: { nanoCpus: 2e9, memoryBytes: 1.5 * 1024 ** 3 } });
  t.deepEqual(parseFlavor("1x512mb"), { ok: true, limits: { nanoCpus: 1e9, memoryBytes: 512 * 1024 ** 2 } });
});

test("flavor - empty means no limits", (t) => {
  t.deepEqual(parseFlavor(""), { ok: true, limits: {} });
  t.deepEqual(parseFlavor(undefined), { ok: true, limits: {} });
});

test("flavor - malformed, zero CPU or too little memory is refused with the expected form", (t) => {
  for (const bad of ["small", "1x", "x512m", "1x512", "1g", "1x512q", "-1x512m", "1x512m extra"]) {
    const parsed = parseFlavor(bad);
    t.false(parsed.ok, bad);
    if (!parsed.ok) t.regex(parsed.error, /is not <cpus>x<memory> \(for example 1x512m/, bad);
  }
  const zero = parseFlavor("0x512m");
  t.like(zero, { ok: false });
  if (!zero.ok) t.regex(zero.error, /no CPU/);
  const tiny = parseFlavor("1x1k");
  if (!tiny.ok) t.regex(tiny.error, /Docker's minimum/);
  else t.fail("1x1k accepted");
});

test("naming - container names are valid Docker names, stable and unique", (t) => {
  const valid = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;
  const name = containerName("acme", "00000017", 1001);
  t.regex(name, valid);
  t.regex(name, /^corral-acme-00000017-1001-[0-9a-f]{8}$/);
  t.is(containerName("acme", "00000017", 1001), name);
  t.not(containerName("acme", "00000017", 1002), name);
  // Tenants that sanitise alike still get different names.
  const slash = containerName("a/b", "c", 1);
  const underscore = containerName("a_b", "c", 1);
  t.regex(slash, valid);
  t.not(slash, underscore);
  const long = containerName("t".repeat(200), "c".repeat(200), 1000);
  t.regex(long, valid);
  t.true(long.length < 110);
  t.not(long, containerName("t".repeat(201), "c".repeat(200), 1000));
});

test("naming - the hostname's first label is the hostname, the rest the domain", (t) => {
  t.deepEqual(hostnameParts("db-1000.c17.example.com"), { hostname: "db-1000", domainname: "c17.example.com" });
  t.deepEqual(hostnameParts("single"), { hostname: "single", domainname: "" });
});

test("labels - containers carry tenant, cluster, node and the managed mark; filters select by them", (t) => {
  const task = { tenant: "acme", clusterId: "00000017", nodeId: "00000017-1001" };
  t.deepEqual(nodeLabels("inst1", task), {
    "corral.installation": "inst1",
    "corral.tenant": "acme",
    "corral.cluster": "00000017",
    "corral.node": "00000017-1001",
    "corral.managed": "docker-provider",
  });
  t.is(LABEL.managed, "corral.managed");
  t.is(MANAGED_BY, "docker-provider");
  const managed = ["corral.managed=docker-provider", "corral.installation=inst1"];
  t.deepEqual(nodeFilter("inst1", "acme", "00000017-1001"), [...managed, "corral.tenant=acme", "corral.node=00000017-1001"]);
  t.deepEqual(clusterFilter("inst1", "acme", "00000017"), [...managed, "corral.tenant=acme", "corral.cluster=00000017"]);
});

test("settings - admin fields with their defaults, DOCKER_HOST for the socket", (t) => {
  t.is(defaultSocketPath({}), "/var/run/docker.sock");
  t.is(defaultSocketPath({ DOCKER_HOST: "unix:///run/user/1000/docker.sock" }), "/run/user/1000/docker.sock");
  t.is(defaultSocketPath({ DOCKER_HOST: "tcp://10.0.0.1:2375" }), "/var/run/docker.sock");
  t.deepEqual(dockerSettings({}, "/d.sock"), { socketPath: "/d.sock", network: "corral", sshUser: "root" });
  t.deepEqual(dockerSettings({ socket_path: " /x.sock ", network: "n", ssh_user: "debian" }, "/d.sock"), {
    socketPath: "/x.sock",
    network: "n",
    sshUser: "debian",
  });
});

test("spec - only optional admin text fields, no user fields", (t) => {
  t.is(DOCKER_SPEC.name, "docker");
  const admin = DOCKER_SPEC.parameters?.admin;
  if (!admin) return t.fail("no admin fields");
  t.deepEqual(Object.keys(admin.fields).sort(), ["network", "socket_path", "ssh_user"]);
  t.true(Object.values(admin.fields).every((f) => f.type === "text"));
  t.deepEqual(admin.required, []);
  t.deepEqual(DOCKER_SPEC.parameters?.user?.required ?? [], []);
});

test("logs - Docker's multiplexed log frames are joined", (t) => {
  const frame = (stream: number, text: string) => {
    const payload = Buffer.from(text);
    const header = Buffer.alloc(8);
    header[0] = stream;
    header.writeUInt32BE(payload.length, 4);
    return Buffer.concat([header, payload]);
  };
  t.is(demuxLogs(Buffer.concat([frame(1, "out\n"), frame(2, "err\n")])), "out\nerr\n");
  t.is(demuxLogs(Buffer.from("plain text\n")), "plain text\n");
});

/** A unix socket server answering every request with `answer` (or never, when it is undefined). */
async function fakeDaemon(answer: string | undefined): Promise<{ socketPath: string; close(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "corral-fake-docker-"));
  const socketPath = join(dir, "docker.sock");
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    socket.once("data", () => {
      if (answer !== undefined) socket.end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    socketPath,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

test("client - an error answer becomes a DockerApiError with the status and Docker's message", async (t) => {
  const body = JSON.stringify({ message: "No such container: nope" });
  const daemon = await fakeDaemon(`HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  t.teardown(() => daemon.close());
  const docker = new DockerClient({ socketPath: daemon.socketPath });
  const err = await t.throwsAsync(docker.inspectContainer("nope"), { instanceOf: DockerApiError });
  t.is(err?.status, 404);
  t.is(err?.dockerMessage, "No such container: nope");
  t.regex(err?.message ?? "", /GET \/containers\/nope\/json failed \(404\): No such container: nope/);
  t.false(await docker.removeContainer("nope"), "removing a missing container is not an error");
});

test("client - a daemon that does not answer times out", async (t) => {
  const daemon = await fakeDaemon(undefined);
  t.teardown(() => daemon.close());
  const docker = new DockerClient({ socketPath: daemon.socketPath, timeoutMs: 200 });
  const started = Date.now();
  const err = await t.throwsAsync(docker.ping(), { instanceOf: DockerTimeoutError });
  t.regex(err?.message ?? "", /within 200 ms/);
  t.true(Date.now() - started < 5_000);
});

test("client - a missing socket is DockerUnreachableError naming it", async (t) => {
  const socketPath = join(tmpdir(), `corral-no-docker-${process.pid}.sock`);
  const err = await t.throwsAsync(new DockerClient({ socketPath }).ping(), { instanceOf: DockerUnreachableError });
  t.is(err?.socketPath, socketPath);
  t.regex(err?.message ?? "", new RegExp(`not reachable at ${socketPath}: ENOENT`));
});

test("periodic - runs on its interval, never two at once, and stop waits for the run in progress", async (t) => {
  let runs = 0;
  let running = 0;
  let overlapped = false;
  let finished = 0;
  const job = every(20, async () => {
    runs++;
    running++;
    overlapped ||= running > 1;
    await new Promise((resolve) => setTimeout(resolve, 50));
    running--;
    finished++;
  });
  await new Promise((resolve) => setTimeout(resolve, 200));
  await job.stop();
  t.true(runs >= 2);
  t.false(overlapped);
  t.is(finished, runs, "the last run finished before stop resolved");
  const after = runs;
  await new Promise((resolve) => setTimeout(resolve, 60));
  t.is(runs, after, "no run after stop");
});
