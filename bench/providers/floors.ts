/**
 * The floors the providers are measured against: what starting N machines costs on this host without Corral. N
 * machines are started 16 at a time, each as its provider makes it (same image, network, limits and key), and a
 * machine counts once its sshd greets on port 22 (a TCP connection reads `SSH-`, polled every 25 ms). The floor is
 * the time from the first start request until the last greeting; the machines are removed afterwards, outside it.
 *
 * - docker: `POST /containers/create` and `/start` on the Docker socket, as the `docker` provider does (the node
 *   image, its `CORRAL_AUTHORIZED_KEYS`, the flavor's limits, one user-defined bridge).
 * - lxd: `POST /1.0/instances` (with `start`) on LXD's socket, as the `lxd` provider does (the node image, the
 *   flavor's limits, the cluster key in cloud-init user-data, the network and pool of the provider).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { DockerClient, defaultSocketPath, generateSshKeyPair, parseFlavor } from "@corral/provisioner/testing";
import { flavorLimits, LxdClient, userData } from "@corral/provider-lxd";
import { mapLimit } from "@corral/shared";
import { readBanner } from "../../test/helpers/docker-hosts.js";
import { removeInstance } from "../../test/helpers/lxd.js";
import { round } from "../clusters/lib.js";

/** Machines started at once by a floor. */
export const FLOOR_CONCURRENCY = 16;
const GREETING_POLL_MS = 25;
const GREETING_TIMEOUT_MS = 180_000;

export interface FloorResult {
  nodes: number;
  concurrency: number;
  /** First start request to the last machine's SSH greeting. */
  seconds: number;
  /** Per machine: its start request to its greeting, s. */
  perMachine: { p50: number; max: number };
  /** Removing them afterwards (not part of the floor), s. */
  removeSeconds: number;
}

/** Polls `ip:22` until sshd greets; rejects after `timeoutMs`. */
async function untilGreeting(ip: string, what: string, timeoutMs = GREETING_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await readBanner(ip, 22, 1_000).catch(() => "")).startsWith("SSH-")) return;
    if (Date.now() > deadline) throw new Error(`${what} at ${ip}: no SSH greeting within ${timeoutMs / 1000} s`);
    await sleep(GREETING_POLL_MS);
  }
}

/**
 * One floor run: `start(i)` makes machine i and returns its address, `concurrency` at a time; `remove` takes every
 * one made away.
 */
async function floor(nodes: number, concurrency: number, start: (i: number) => Promise<string>, remove: () => Promise<void>, what: string): Promise<FloorResult> {
  const perMachine: number[] = [];
  let lastGreeting = 0;
  let removeMs = 0;
  const startedAt = Date.now();
  try {
    await mapLimit(
      Array.from({ length: nodes }, (_, i) => i),
      concurrency,
      async (i) => {
        const t0 = Date.now();
        const ip = await start(i);
        await untilGreeting(ip, `${what} ${i}`);
        lastGreeting = Math.max(lastGreeting, Date.now());
        perMachine.push(Date.now() - t0);
      },
    );
  } finally {
    const removing = performance.now();
    await remove();
    removeMs = performance.now() - removing;
  }
  const sorted = perMachine.sort((a, b) => a - b);
  return {
    nodes,
    concurrency,
    seconds: round((lastGreeting - startedAt) / 1000, 2),
    perMachine: { p50: round((sorted[Math.floor(sorted.length / 2)] ?? 0) / 1000, 2), max: round((sorted.at(-1) ?? 0) / 1000, 2) },
    removeSeconds: round(removeMs / 1000, 2),
  };
}

export interface DockerFloorOptions {
  image: string;
  /** An existing user-defined bridge network. */
  network: string;
  flavor: string;
  /** Label on every container made, for the clean-up of a failed run. */
  label: Record<string, string>;
  /** @default FLOOR_CONCURRENCY */
  concurrency?: number;
}

export async function dockerFloor(nodes: number, options: DockerFloorOptions): Promise<FloorResult> {
  const docker = new DockerClient({ socketPath: defaultSocketPath() });
  const key = generateSshKeyPair();
  const limits = parseFlavor(options.flavor);
  if (!limits.ok) throw new Error(limits.error);
  const made: string[] = [];
  const tag = `${process.pid}-${Date.now().toString(36)}`;
  return floor(
    nodes,
    options.concurrency ?? FLOOR_CONCURRENCY,
    async (i) => {
      const id = await docker.createContainer(`corral-floor-${tag}-${i}`, {
        Image: options.image,
        Hostname: `floor-${i}`,
        Env: [`CORRAL_AUTHORIZED_KEYS=${key.publicKey}`],
        Labels: options.label,
        HostConfig: { NetworkMode: options.network, NanoCpus: limits.limits.nanoCpus!, Memory: limits.limits.memoryBytes! },
      });
      made.push(id);
      await docker.startContainer(id);
      const ip = (await docker.inspectContainer(id)).NetworkSettings.Networks?.[options.network]?.IPAddress;
      if (!ip) throw new Error(`floor container ${id.slice(0, 12)} has no address on ${options.network}`);
      return ip;
    },
    async () => {
      await mapLimit(made, FLOOR_CONCURRENCY, (id) => docker.removeContainer(id).catch(() => false));
    },
    "docker floor container",
  );
}

export interface LxdFloorOptions {
  socketPath: string;
  image: string;
  network: string;
  storagePool: string;
  flavor: string;
  /** Config keys on every instance made (`user.corral.tenant`, for the clean-up of a failed run). */
  config: Record<string, string>;
}

export async function lxdFloor(nodes: number, options: LxdFloorOptions): Promise<FloorResult> {
  const lxd = new LxdClient({ endpoint: { kind: "unix", socketPath: options.socketPath } });
  const key = generateSshKeyPair();
  const limits = flavorLimits(options.flavor);
  if (!limits.ok) throw new Error(limits.error);
  const made: string[] = [];
  const tag = Date.now().toString(36);
  try {
    return await floor(
      nodes,
      FLOOR_CONCURRENCY,
      async (i) => {
        const name = `corral-floor-${tag}-${i}`;
        made.push(name);
        const op = await lxd.createInstance({
          name,
          type: "container",
          source: { type: "image", alias: options.image },
          profiles: ["default"],
          config: { ...options.config, ...limits.config, "user.user-data": userData("root", key.publicKey) },
          devices: {
            eth0: { type: "nic", name: "eth0", network: options.network },
            root: { type: "disk", path: "/", pool: options.storagePool },
          },
          start: true,
        });
        await lxd.waitOperation(op);
        // LXD before 5.7 ignores `start` (as the provider's CREATE, start it then).
        if ((await lxd.getInstance(name))?.status !== "Running") await lxd.waitOperation(await lxd.changeState(name, { action: "start" }));
        return untilAddress(lxd, name);
      },
      async () => {
        await mapLimit(made, FLOOR_CONCURRENCY, (name) => removeInstance(name).catch(() => undefined));
      },
      "lxd floor instance",
    );
  } finally {
    lxd.close();
  }
}

/** The instance's global IPv4 address on eth0, polled every 25 ms (as quickly as the greeting). */
async function untilAddress(lxd: LxdClient, name: string): Promise<string> {
  const deadline = Date.now() + GREETING_TIMEOUT_MS;
  for (;;) {
    const state = await lxd.instanceState(name);
    if (state && state.status !== "Running") {
      const console = await lxd.consoleTail(name, 5).catch(() => "");
      throw new Error(`lxd floor instance ${name} is ${state.status}; its console ends: ${console.trim().split("\n").join(" / ")}`);
    }
    const address = state?.network?.["eth0"]?.addresses.find((a) => a.family === "inet" && a.scope === "global")?.address;
    if (address) return address;
    if (Date.now() > deadline) throw new Error(`lxd floor instance ${name}: no IPv4 address within ${GREETING_TIMEOUT_MS / 1000} s`);
    await sleep(GREETING_POLL_MS);
  }
}
