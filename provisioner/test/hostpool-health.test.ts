import { createServer } from "node:net";
import { silentLogger } from "@corral/shared";
import type { ProviderPlugin } from "@corral/provisioner";
import { probeSsh } from "@corral/provisioner/sdk";
import { createHostpoolProvider, SshPool } from "@corral/provisioner/testing";
import { startLocalSshd, type LocalSshd } from "../../test/helpers/sshd.js";
import { testWithNats } from "../../test/helpers/nats-test.js";
import { taskMessage } from "./helpers.js";
import { checkHealth, healthTargetOf } from "./helpers/health.js";

let sshd: LocalSshd;
let provider: ProviderPlugin;

/** The hostpool provider's health checks against a real sshd on loopback. */
const test = testWithNats("hostpool-health-test", async (nc) => {
  sshd = await startLocalSshd();
  provider = createHostpoolProvider({
    access: { pool: new SshPool({ log: silentLogger }), credentials: { workDir: "/nonexistent", clusterKeys: undefined } },
    nc,
    log: silentLogger,
    healthProbeTimeoutMs: 1_500,
  });
});

test.after.always(async () => {
  await sshd?.stop();
  await provider?.close?.();
});

/** A pool node on `port` of loopback, with the host keys CONFIRM pinned. */
function poolNode(port: number, hostKeys: Record<string, string>) {
  const task = taskMessage({
    tenant: "acme",
    config: { hostname: "127.0.0.1", provider: { name: "pool", providertype: "hostpool", provisioner: { hosts: `127.0.0.1:${port}` } } },
  });
  return healthTargetOf(task, [
    { status: 0, result: { providerid: `127.0.0.1:${port}`, "ssh-auth": { user: "root", port, key_resource: "k" } } },
    { status: 0, hostname: "127.0.0.1", ipaddresses: { access_v4: "127.0.0.1" }, result: { ssh_host_keys: hostKeys } },
  ]);
}

/** A port that accepts TCP and never speaks SSH. */
async function silentPort(): Promise<{ port: number; close: () => void }> {
  const server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { port, close: () => server.close() };
}

test.serial("answering with the pinned key is healthy; another key, silence or a refused port is unreachable", async (t) => {
  const node = poolNode(sshd.port, sshd.hostKeys);
  const [healthy] = await checkHealth(provider, [node]);
  t.deepEqual(healthy, { state: "healthy", message: `hostpool: host 127.0.0.1:${sshd.port} answers SSH with its pinned host key` });

  const silent = await silentPort();
  const started = Date.now();
  const [quiet] = await checkHealth(provider, [poolNode(silent.port, sshd.hostKeys)]);
  silent.close();
  t.is(quiet!.state, "unreachable");
  t.regex(quiet!.message, /did not complete an SSH handshake within 1500 ms/);
  t.true(Date.now() - started < 5_000, "bounded by the probe's timeout");

  const pinned = sshd.hostKeys;
  await sshd.changeHostKey();
  const [other] = await checkHealth(provider, [poolNode(sshd.port, pinned)]);
  t.is(other!.state, "unreachable");
  t.regex(other!.message, /presented host key .* not the pinned .*: another machine answers there/);

  await sshd.stop();
  const [refused] = await checkHealth(provider, [poolNode(sshd.port, pinned)]);
  t.is(refused!.state, "unreachable");
  t.regex(refused!.message, /does not answer: ECONNREFUSED/);
});

test("a probe aborts with its signal", async (t) => {
  const controller = new AbortController();
  const silent = await silentPort();
  const probing = probeSsh({ host: "127.0.0.1", port: silent.port, hostKeys: { "ssh-ed25519": "AAAA" } }, { timeoutMs: 10_000, signal: controller.signal });
  controller.abort();
  t.like(await probing, { ok: false, kind: "aborted" });
  silent.close();
});

test("a node without a pinned host key is unknown; the batch is the tenant's provider", (t) => {
  const node = poolNode(22, {});
  t.is(provider.health!.batchOf(node), "acme\u0000pool");
  return checkHealth(provider, [node]).then(([found]) => t.is(found!.state, "unknown"));
});
