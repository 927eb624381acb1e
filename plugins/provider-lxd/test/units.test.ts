/**
 * The lxd provider's parts that need no LXD: settings, instance names, limits, user-data, and the REST client against
 * a small fake of LXD's API on a unix socket (envelopes, operation waits, errors).
 */
import test from "ava";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  defaultSocketPath,
  flavorLimits,
  instanceName,
  LxdApiError,
  LxdClient,
  LxdOperationError,
  LxdUnreachableError,
  lxdSettings,
  userData,
} from "@corral/provider-lxd";

const LXD_NAME = /^[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

test("settings: no fields mean the local socket, project default, profile default, containers, cloud-init", (t) => {
  const parsed = lxdSettings({}, "/var/lib/lxd/unix.socket");
  if (!parsed.ok) return t.fail(parsed.error);
  t.deepEqual(parsed.settings, {
    endpoint: { kind: "unix", socketPath: "/var/lib/lxd/unix.socket" },
    project: "default",
    profiles: ["default"],
    instanceType: "container",
    keyDelivery: "cloud-init",
  });
});

test("settings: every field, a remote LXD over HTTPS, and the refusals", (t) => {
  const parsed = lxdSettings(
    {
      url: "https://lxd.example:8443/",
      client_cert: "CERT",
      client_key: "KEY",
      server_cert: "SERVER",
      project: "corral",
      profiles: "default, small ,",
      network: "br1",
      storage_pool: "fast",
      instance_type: "virtual-machine",
      ssh_user: "debian",
      key_delivery: "file",
    },
    "/unused",
  );
  if (!parsed.ok) return t.fail(parsed.error);
  t.deepEqual(parsed.settings, {
    endpoint: { kind: "https", url: "https://lxd.example:8443", clientCert: "CERT", clientKey: "KEY", serverCert: "SERVER" },
    project: "corral",
    profiles: ["default", "small"],
    network: "br1",
    storagePool: "fast",
    instanceType: "virtual-machine",
    sshUser: "debian",
    keyDelivery: "file",
  });
  const refusals: Array<[Record<string, string>, RegExp]> = [
    [{ url: "https://lxd.example:8443" }, /needs client_cert and client_key/],
    [{ url: "http://lxd.example:8443", client_cert: "C", client_key: "K" }, /is not https:\/\/host\[:port\]/],
    [{ instance_type: "vm" }, /instance_type "vm" is neither container nor virtual-machine/],
    [{ key_delivery: "ssh" }, /key_delivery "ssh" is neither cloud-init nor file/],
  ];
  for (const [fields, message] of refusals) {
    const refused = lxdSettings(fields, "/unused");
    t.false(refused.ok);
    if (!refused.ok) t.regex(refused.error, message);
  }
});

test("the local socket: LXD_SOCKET, LXD_DIR, then the snap's or Debian's, whichever exists", (t) => {
  const none = () => false;
  t.is(defaultSocketPath({ LXD_SOCKET: "/run/lxd.sock", LXD_DIR: "/x" }, none), "/run/lxd.sock");
  t.is(defaultSocketPath({ LXD_DIR: "/srv/lxd" }, none), "/srv/lxd/unix.socket");
  t.is(defaultSocketPath({}, none), "/var/lib/lxd/unix.socket");
  t.is(defaultSocketPath({}, (p) => p.startsWith("/var/snap/")), "/var/snap/lxd/common/lxd/unix.socket");
});

test("instance names are valid LXD names, stable, readable and distinct per installation, tenant, cluster and node", (t) => {
  const a = instanceName("inst-1", { tenant: "acme", clusterId: "00000001" }, 1001, "web00000001-1001.example.com");
  t.regex(a, /^corral-web00000001-1001-[0-9a-f]{8}$/);
  t.is(instanceName("inst-1", { tenant: "acme", clusterId: "00000001" }, 1001, "web00000001-1001.example.com"), a, "stable");
  const others = [
    instanceName("inst-2", { tenant: "acme", clusterId: "00000001" }, 1001, "web00000001-1001.example.com"),
    instanceName("inst-1", { tenant: "acme2", clusterId: "00000001" }, 1001, "web00000001-1001.example.com"),
    instanceName("inst-1", { tenant: "acme", clusterId: "00000002" }, 1001, "web00000001-1001.example.com"),
    instanceName("inst-1", { tenant: "acme", clusterId: "00000001" }, 1002, "web00000001-1001.example.com"),
  ];
  t.is(new Set([a, ...others]).size, 5);
  const odd = [
    instanceName("i", { tenant: "t", clusterId: "c" }, 1, `${"Very_Long.Cluster Name ".repeat(5)}.local`),
    instanceName("i", { tenant: "t", clusterId: "c" }, 1, "--__--.local"),
    instanceName("i", { tenant: "t", clusterId: "0001" }, 7, ""),
    instanceName("i", { tenant: "t", clusterId: "c" }, 1, "x".repeat(70)),
  ];
  for (const name of [a, ...others, ...odd]) t.regex(name, LXD_NAME, name);
  for (const name of odd) t.true(name.length <= 63, name);
});

test("flavors become LXD limits; a bad flavor is refused", (t) => {
  t.deepEqual(flavorLimits(""), { ok: true, config: {} });
  t.deepEqual(flavorLimits(undefined), { ok: true, config: {} });
  t.deepEqual(flavorLimits("1x256m"), { ok: true, config: { "limits.cpu": "1", "limits.memory": String(256 * 1024 ** 2) } });
  t.deepEqual(flavorLimits("2x4g"), { ok: true, config: { "limits.cpu": "2", "limits.memory": String(4 * 1024 ** 3) } });
  t.deepEqual(flavorLimits("0.5x512m"), {
    ok: true,
    config: { "limits.cpu": "1", "limits.cpu.allowance": "50ms/100ms", "limits.memory": String(512 * 1024 ** 2) },
  });
  t.deepEqual(flavorLimits("1.5x1g"), {
    ok: true,
    config: { "limits.cpu": "2", "limits.cpu.allowance": "150ms/100ms", "limits.memory": String(1024 ** 3) },
  });
  const bad = flavorLimits("large");
  t.false(bad.ok);
  if (!bad.ok) t.regex(bad.error, /flavor "large" is not <cpus>x<memory>/);
});

test("user-data: root gets the key without a default user; another user is made with sudo", (t) => {
  const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample corral-t-c";
  const root = userData("root", `${key}\n`);
  t.true(root.startsWith("#cloud-config\n"));
  t.deepEqual(JSON.parse(root.slice("#cloud-config\n".length)), { disable_root: false, users: [], ssh_authorized_keys: [key] });
  const other = JSON.parse(userData("debian", key).slice("#cloud-config\n".length));
  t.deepEqual(other, {
    users: [{ name: "debian", shell: "/bin/bash", sudo: "ALL=(ALL) NOPASSWD:ALL", lock_passwd: true, ssh_authorized_keys: [key] }],
  });
});

/** A fake of LXD's API on a unix socket: `routes` answer by "METHOD path"; every request is recorded. */
async function fakeLxd(routes: Record<string, (req: IncomingMessage, res: ServerResponse, body: Buffer) => void>) {
  const dir = await mkdtemp(join(tmpdir(), "corral-fake-lxd-"));
  const socketPath = join(dir, "unix.socket");
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const key = `${req.method} ${req.url}`;
      seen.push(key);
      const route = routes[key] ?? routes[`${req.method} ${req.url?.split("?")[0]}`];
      if (route) return route(req, res, Buffer.concat(chunks));
      res.writeHead(404, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ type: "error", error: "not found", error_code: 404 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    socketPath,
    seen,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify(body));
};

test("the client: sync metadata, project query, async operations waited for, failures as LxdOperationError and LxdApiError", async (t) => {
  const op = (status_code: number, err = "") => ({ id: "op1", class: "task", description: "Creating instance", status_code, status: status_code === 200 ? "Success" : "Failure", err });
  let waits = 0;
  const fake = await fakeLxd({
    "GET /1.0/instances/n1?project=p": (_q, res) => json(res, 200, { type: "sync", status_code: 200, metadata: { name: "n1", status: "Running", config: {} } }),
    "POST /1.0/instances?project=p": (_q, res, body) => {
      t.like(JSON.parse(body.toString()), { name: "x", source: { type: "image", alias: "a" } });
      json(res, 202, { type: "async", status_code: 100, operation: "/1.0/operations/op1", metadata: op(103) });
    },
    "GET /1.0/operations/op1/wait": (_q, res) => {
      waits++;
      json(res, 200, { type: "sync", metadata: waits < 2 ? op(103) : op(400, "Failed creating instance: no such image") });
    },
    "GET /1.0/instances/missing?project=p": (_q, res) => json(res, 404, { type: "error", error: "Instance not found", error_code: 404 }),
    "DELETE /1.0/instances/n1?project=p": (_q, res) => json(res, 400, { type: "error", error: "Instance is running", error_code: 400 }),
  });
  t.teardown(() => fake.close());
  const lxd = new LxdClient({ endpoint: { kind: "unix", socketPath: fake.socketPath }, project: "p" });
  t.teardown(() => lxd.close());

  t.like(await lxd.getInstance("n1"), { name: "n1", status: "Running" });
  t.is(await lxd.getInstance("missing"), undefined, "404 is no instance");
  const started = await lxd.createInstance({ name: "x", type: "container", source: { type: "image", alias: "a" } });
  const failure = await t.throwsAsync(() => lxd.waitOperation(started), { instanceOf: LxdOperationError });
  t.regex(failure?.message ?? "", /Creating instance failed: Failed creating instance: no such image/);
  t.is(waits, 2, "waited until the operation ended");
  t.true(fake.seen.includes("GET /1.0/operations/op1/wait?timeout=30"), "waits are server-side, without the project");
  const refused = await t.throwsAsync(() => lxd.deleteInstance("n1"), { instanceOf: LxdApiError });
  t.is(refused?.status, 400);
  t.is(refused?.lxdMessage, "Instance is running");
});

test("the client: an absent socket is LxdUnreachableError naming it", async (t) => {
  const lxd = new LxdClient({ endpoint: { kind: "unix", socketPath: "/tmp/corral-no-such-lxd.socket" } });
  const err = await t.throwsAsync(() => lxd.server(), { instanceOf: LxdUnreachableError });
  t.regex(err?.message ?? "", /LXD is not reachable at \/tmp\/corral-no-such-lxd\.socket/);
});
