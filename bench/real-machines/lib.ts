/**
 * Shared parts of the real-machine benchmarks: the load of the (shared, 2-core) machine around a run, latency
 * percentiles, results files, and a fleet of sshd containers of the node image reached the way the `shell`
 * automator reaches a node (a synced `ssh_keys` resource, the host key pinned as CONFIRM pins it).
 */
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { freemem, loadavg, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import type { TaskMessage } from "@corral/contracts";
import { mapLimit, silentLogger } from "@corral/shared";
import { generateSshKeyPair, sshKeyFile, SshPool } from "@corral/provisioner/testing";
import { createTestNetwork, ensureDockerForTests, removeTestContainers, startSshHost, type SshHost, type TestNetwork } from "../../test/helpers/docker-hosts.js";
import { machineCpuSeconds, round } from "../clusters/lib.js";

export { machine, round } from "../clusters/lib.js";

const run = promisify(execFile);

export { latencySummary, percentile } from "../stats.js";

/** What else the machine is doing: other engineers' tests share its 2 cores and its Docker. */
export interface LoadSnapshot {
  at: string;
  loadAverage1m5m15m: number[];
  runningContainers: number;
  freeMemoryGiB: number;
}

export async function loadSnapshot(): Promise<LoadSnapshot> {
  const ids = await run("docker", ["ps", "-q"]).then((r) => r.stdout.split("\n").filter(Boolean).length).catch(() => -1);
  return {
    at: new Date().toISOString(),
    loadAverage1m5m15m: loadavg().map((x) => round(x, 2)),
    runningContainers: ids,
    freeMemoryGiB: round(freemem() / 1024 ** 3, 1),
  };
}

/** Busy share of the whole machine (all cores) and this process's CPU seconds, between start and stop. */
export interface CpuUse {
  machineBusyPercent: number;
  machineBusyCpuSeconds: number;
  thisProcessCpuSeconds: number;
  /** Of the containers passed to {@link cpuWindow} (the nodes), when any. */
  nodeContainersCpuSeconds: number;
  /** Busy CPU of neither this process nor those containers: dockerd, other engineers' tests, the kernel. */
  restOfMachineCpuSeconds: number;
  wallSeconds: number;
}

export function cpuWindow(containerIds: readonly string[] = []): () => CpuUse {
  const m0 = machineCpuSeconds();
  const c0 = containerCpuSeconds(containerIds);
  const self = process.cpuUsage();
  const t0 = performance.now();
  return () => {
    const m1 = machineCpuSeconds();
    const used = process.cpuUsage(self);
    const busy = m1.busy - m0.busy;
    const total = busy + (m1.idle - m0.idle);
    const mine = (used.user + used.system) / 1e6;
    const nodes = containerCpuSeconds(containerIds) - c0;
    return {
      machineBusyPercent: round((busy / Math.max(total, 1e-9)) * 100, 1),
      machineBusyCpuSeconds: round(busy, 2),
      thisProcessCpuSeconds: round(mine, 2),
      nodeContainersCpuSeconds: round(nodes, 2),
      restOfMachineCpuSeconds: round(Math.max(0, busy - mine - nodes), 2),
      wallSeconds: round((performance.now() - t0) / 1000, 2),
    };
  };
}

/**
 * CPU seconds the given containers have used, from their cgroups (v1 cpuacct, or v2 cpu.stat); 0 for one whose
 * cgroup is not found (a rootless or remote Docker).
 */
export function containerCpuSeconds(ids: readonly string[]): number {
  let total = 0;
  for (const id of ids) {
    try {
      total += Number(readFileSync(`/sys/fs/cgroup/cpuacct/docker/${id}/cpuacct.usage`, "utf8")) / 1e9;
      continue;
    } catch {
      // not cgroup v1 with the cgroupfs driver
    }
    try {
      const stat = readFileSync(`/sys/fs/cgroup/system.slice/docker-${id}.scope/cpu.stat`, "utf8");
      total += Number(/usage_usec (\d+)/.exec(stat)?.[1] ?? 0) / 1e6;
    } catch {
      // unknown layout
    }
  }
  return total;
}

/** Anonymous memory (rss) of the given containers' cgroups, bytes (v1 memory.stat total_rss, or v2 anon). */
export function containerRssBytes(ids: readonly string[]): number {
  let total = 0;
  for (const id of ids) {
    for (const [file, field] of [
      [`/sys/fs/cgroup/memory/docker/${id}/memory.stat`, "total_rss"],
      [`/sys/fs/cgroup/system.slice/docker-${id}.scope/memory.stat`, "anon"],
    ] as const) {
      try {
        const stat = readFileSync(file, "utf8");
        total += Number(new RegExp(`^${field} (\\d+)$`, "m").exec(stat)?.[1] ?? 0);
        break;
      } catch {
        // try the next layout
      }
    }
  }
  return total;
}

export const totalMemoryGiB = () => round(totalmem() / 1024 ** 3, 1);

/** Writes `bench/results/<name>` (pretty JSON) and prints it. */
export function writeResult(name: string, result: unknown): void {
  const file = new URL(`../results/${name}`, import.meta.url);
  mkdirSync(dirname(file.pathname), { recursive: true });
  writeFileSync(file, JSON.stringify(result, null, 2) + "\n");
  console.log(JSON.stringify(result, null, 2));
}

export const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

/** Tenant, provider type and key resource the fleet's tasks name. */
export const FLEET_TENANT = "bench-ssh";
const PROVIDER_TYPE = "static";
const KEY_RESOURCE = "fleet-key";

/** sshd containers of the node image, one key for all, their host keys learned once. */
export interface SshFleet {
  hosts: Array<SshHost & { hostKeys: Record<string, string> }>;
  /** Work directory holding the key as a synced `ssh_keys` resource (`CredentialSources.workDir`). */
  workDir: string;
  privateKey: string;
  /** A service-action task of host `i`, as the clusters service would send it after CONFIRM. */
  task(i: number, taskId: string): TaskMessage;
  stop(): Promise<void>;
}

export async function startSshFleet(count: number, name: string): Promise<SshFleet> {
  await ensureDockerForTests();
  const key = generateSshKeyPair();
  const workDir = await mkdtemp(join(tmpdir(), "corral-bench-ssh-"));
  const keyFile = sshKeyFile(workDir, FLEET_TENANT, PROVIDER_TYPE, KEY_RESOURCE);
  await mkdir(dirname(keyFile), { recursive: true });
  await writeFile(keyFile, key.privateKey, { mode: 0o400 });
  let network: TestNetwork | undefined;
  const started: SshHost[] = [];
  const stop = async () => {
    await Promise.all(started.map((h) => h.stop()));
    await network?.remove().catch(() => undefined);
    await removeTestContainers();
    await rm(workDir, { recursive: true, force: true });
  };
  try {
    network = await createTestNetwork(`${name}-${process.pid}`);
    const net = network.name;
    // A few at a time: the machine is shared, and each start waits for sshd's greeting.
    await mapLimit(
      Array.from({ length: count }, (_, i) => i),
      5,
      async () => void started.push(await startSshHost({ network: net, authorizedKeys: key.publicKey })),
    );
    const learner = new SshPool({ log: silentLogger });
    const hosts = await Promise.all(
      started.map(async (h) => {
        const presented = await learner.learnHostKey({ host: h.ip, port: 22, username: "root", privateKey: key.privateKey }, new AbortController().signal);
        return Object.assign(h, { hostKeys: { [presented.type]: presented.key } });
      }),
    );
    await learner.close();
    return {
      hosts,
      workDir,
      privateKey: key.privateKey,
      task(i, taskId) {
        const host = hosts[i % hosts.length]!;
        return {
          tenant: FLEET_TENANT,
          clusterId: "00000001",
          planId: "00000001-001",
          taskId,
          dispatch: 1,
          taskName: "START",
          nodeId: `node-${i % hosts.length}`,
          submitTime: Date.now(),
          config: {
            cluster: {},
            hostname: `bench-${1000 + (i % hosts.length)}.local`,
            ipaddresses: { access_v4: host.ip, bind_v4: host.ip },
            nodenum: 1000 + (i % hosts.length),
            hardwaretype: "small",
            imagetype: "debian12",
            services: ["noop"],
            automators: ["shell"],
            provider: { name: "fleet", providertype: PROVIDER_TYPE, provisioner: {} },
            results: { "ssh-auth": { user: "root", key_resource: KEY_RESOURCE }, ssh_host_keys: host.hostKeys },
            service: { name: "noop", action: { type: "shell", fields: { script: "true" } } },
          },
        };
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
