/**
 * What each SSH step of a node's CONFIRM, BOOTSTRAP and service actions costs, one node at a time, on containers
 * of the node image: a handshake with login (CONFIRM's `learnHostKey`, a pooled connection's first `acquire`),
 * one exec channel on a kept connection (`true`), BOOTSTRAP's steps (work directories, the checksum listing of
 * each synced resource type) and a `shell` action's script. Wall time in this process and CPU time of the
 * container (sshd, shells) and of this process, medians over BENCH_SAMPLES containers.
 *
 * Run: node --import=tsx bench/providers/ssh-steps.ts   (BENCH_SAMPLES, default 10) -> bench/results/providers-ssh-steps.json
 */
import { silentLogger } from "@corral/shared";
import { generateSshKeyPair, runRemote, SshPool } from "@corral/provisioner/testing";
import type { SshTarget } from "@corral/provisioner/sdk";
import { createTestNetwork, removeTestContainers, startSshHost, type SshHost } from "../../test/helpers/docker-hosts.js";
import { containerCpuSeconds, latencySummary, loadSnapshot, log, machine, writeResult } from "../real-machines/lib.js";

const SAMPLES = Number(process.env["BENCH_SAMPLES"] ?? 10);
const OUT = process.env["BENCH_OUT"] ?? "providers-ssh-steps.json";

type Step = { wallMs: number; nodeCpuMs: number; selfCpuMs: number };
const steps = new Map<string, Step[]>();

async function timed<T>(name: string, containerId: string, fn: () => Promise<T>): Promise<T> {
  const node0 = containerCpuSeconds([containerId]);
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await fn();
  const wallMs = performance.now() - t0;
  const self = process.cpuUsage(self0);
  const sample = { wallMs, nodeCpuMs: (containerCpuSeconds([containerId]) - node0) * 1000, selfCpuMs: (self.user + self.system) / 1000 };
  steps.set(name, [...(steps.get(name) ?? []), sample]);
  return value;
}

const ACTION_SCRIPT = [
  "umask 077",
  "[ -d /var/lib/corral/run ] && [ -d /var/lib/corral/work ] || mkdir -p /var/lib/corral/run /var/lib/corral/work",
  "corral_cleanup() { rm -f /var/lib/corral/run/task.json; }",
  "trap corral_cleanup EXIT",
  "printf '%s\\n' '{\"task\":1}' > /var/lib/corral/run/task.json",
  "export CORRAL_TASK_FILE=/var/lib/corral/run/task.json",
  "cd /var/lib/corral/work || exit 1",
  "umask 022",
  "/bin/sh -c 'mkdir -p /opt/b && echo installed > /opt/b/app.installed' </dev/null",
  "",
].join("\n");

const key = generateSshKeyPair();
const network = await createTestNetwork(`corral-bench-ssh-steps-${process.pid}`);
const hosts: SshHost[] = [];
const load = await loadSnapshot();
try {
  for (let i = 0; i < SAMPLES; i++) hosts.push(await startSshHost({ network: network.name, authorizedKeys: key.publicKey }));
  for (const host of hosts) {
    // Pools of their own per node, so each node's first acquire of `fresh` makes a connection.
    const pool = new SshPool({ log: silentLogger });
    const fresh = new SshPool({ log: silentLogger });
    const target: SshTarget = { host: host.ip, port: 22, username: "root", privateKey: key.privateKey };
    const signal = new AbortController().signal;
    const presented = await timed("handshake and login, learning the host key (CONFIRM)", host.id, () => pool.learnHostKey(target, signal));
    const pinned = { ...target, hostKeys: { [presented.type]: presented.key } };
    const other = await timed("handshake and login, pinned key (first acquire of a node)", host.id, () => fresh.acquire(pinned, signal));
    other.release();
    await fresh.close();
    const lease = await timed("acquire after CONFIRM's learnHostKey (BOOTSTRAP)", host.id, () => pool.acquire(pinned, signal));
    const run = (command: string) => runRemote(lease, { command, user: "root", timeoutMs: 30_000, signal });
    await timed("first exec channel of a connection: true", host.id, () => run("true"));
    await timed("exec channel: true", host.id, () => run("true"));
    await timed("BOOTSTRAP: work directories", host.id, () => run("mkdir -p /var/lib/corral/work /var/lib/corral/run && chmod 700 /var/lib/corral/run"));
    await timed("BOOTSTRAP: checksums of one resource type", host.id, () =>
      run("mkdir -p '/var/lib/corral/resources/shell/scripts' && cd '/var/lib/corral/resources/shell/scripts' && find . -type f -exec sha256sum -- {} +"),
    );
    const dirs = "'/var/lib/corral/resources/shell/scripts' '/var/lib/corral/resources/shell/archives'";
    await timed("BOOTSTRAP in one command: work directories, a find over both resource types", host.id, () =>
      run(`mkdir -p /var/lib/corral/work /var/lib/corral/run && chmod 700 /var/lib/corral/run && mkdir -p ${dirs} && find ${dirs} -type f -exec sha256sum -- {} +`),
    );
    await timed("action script (shell install)", host.id, () => runRemote(lease, { script: ACTION_SCRIPT, user: "root", timeoutMs: 30_000, signal }));
    lease.release();
    await pool.close();
  }
  const summary = Object.fromEntries(
    [...steps].map(([name, xs]) => [
      name,
      { wallMs: latencySummary(xs.map((x) => x.wallMs)), nodeCpuMs: latencySummary(xs.map((x) => x.nodeCpuMs)), provisionerCpuMs: latencySummary(xs.map((x) => x.selfCpuMs)) },
    ]),
  );
  for (const [name, v] of Object.entries(summary)) log(`${name}: wall p50 ${v.wallMs.p50} ms, node CPU p50 ${v.nodeCpuMs.p50} ms, provisioner CPU p50 ${v.provisionerCpuMs.p50} ms`);
  writeResult(OUT, { date: new Date().toISOString(), machine: machine(), load, samples: SAMPLES, steps: summary });
} finally {
  await Promise.all(hosts.map((h) => h.stop()));
  await network.remove().catch(() => undefined);
  await removeTestContainers();
}
process.exit(0);
