/**
 * A real LXD for tests of the `lxd` provider: installs Debian's `lxd` and `dnsmasq-base` with apt-get when missing,
 * starts the daemon, makes a `dir` storage pool and a bridge on a subnet of 10.187.0.0/16 that no route of this
 * machine uses, and imports the node image (`npm run lxd-image`'s corral/node-bookworm) when LXD lacks it. Several
 * test processes share them: each holds a lease (`<state dir>/lxd-test/leases/<pid>`), and the last to release
 * removes what the helpers made (the network, the pool, the image when they imported it, the firewall rules);
 * nothing that existed before is touched. The daemon is left running, as dockerd is.
 */
import { execFile } from "node:child_process";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { defaultStateDir, isProcessAlive } from "@corral/deploy";
import { withDirLock } from "../../deploy/src/dir-lock.js";
import { ensureLxdImage, LXD_NODE_IMAGE } from "../../deploy/src/lxd-image.js";
import { ensureLxd, lxdCall, lxdRequest, lxdSocketPath } from "../../deploy/src/lxd-image-daemon.js";

const run = promisify(execFile);

export const TEST_POOL = "corral-test";
export const TEST_NETWORK = "corraltest0";
/** Marks the firewall rules the helpers add, so they remove exactly those. */
const RULE_COMMENT = "corral-lxd-test";

/** What the tests get: where LXD is and what to point the provider at. */
export interface LxdForTests {
  socketPath: string;
  network: string;
  storagePool: string;
  /** `<bridge address>/<prefix>` of the network, e.g. 10.187.71.1/24 */
  subnet: string;
  image: string;
  /** Admin fields of an `lxd` provider using the helpers' network and pool (the default profile is not touched). */
  providerFields: Record<string, string>;
}

/** What the helpers made, so the last lease removes exactly that. */
interface Made {
  pool?: string;
  network?: string;
  /** Fingerprint of the image they imported. */
  image?: string;
  /** Bridges they added FORWARD accept rules for. */
  firewall?: string[];
}

const stateDir = () => join(defaultStateDir(), "lxd-test");
const leaseDir = () => join(stateDir(), "leases");
const madeFile = () => join(stateDir(), "made.json");
const lock = () => join(defaultStateDir(), "locks", "lxd-test.lock");
const log = (line: string) => process.stderr.write(`[lxd] ${line}\n`);

let ready: Promise<LxdForTests> | undefined;

/**
 * Makes LXD ready for this test process (once per process) and takes a lease on what the helpers share. Call
 * {@link releaseLxdForTests} in `test.after.always`.
 */
export function ensureLxdForTests(): Promise<LxdForTests> {
  ready ??= prepare().catch((err: unknown) => {
    ready = undefined;
    throw err;
  });
  return ready;
}

async function prepare(): Promise<LxdForTests> {
  await ensureLxd({ log });
  return withDirLock(
    lock(),
    async () => {
      const made = await readMade();
      await mkdir(leaseDir(), { recursive: true });
      await writeFile(join(leaseDir(), String(process.pid)), "");
      if (!(await exists(`/1.0/storage-pools/${TEST_POOL}`))) {
        log(`creating the dir storage pool ${TEST_POOL}`);
        await lxdCall("POST", "/1.0/storage-pools", { body: { name: TEST_POOL, driver: "dir", description: "Corral tests (test/helpers/lxd.ts)" } });
        made.pool = TEST_POOL;
      }
      let subnet: string;
      if (await exists(`/1.0/networks/${TEST_NETWORK}`)) {
        subnet = (await lxdCall("GET", `/1.0/networks/${TEST_NETWORK}`)).config["ipv4.address"] as string;
      } else {
        subnet = await freeSubnet();
        log(`creating the bridge ${TEST_NETWORK} on ${subnet}`);
        await lxdCall("POST", "/1.0/networks", {
          body: {
            name: TEST_NETWORK,
            type: "bridge",
            description: "Corral tests (test/helpers/lxd.ts)",
            config: { "ipv4.address": subnet, "ipv4.nat": "false", "ipv6.address": "none" },
          },
        });
        made.network = TEST_NETWORK;
      }
      if (await acceptBridgedTraffic(TEST_NETWORK)) made.firewall = [...new Set([...(made.firewall ?? []), TEST_NETWORK])];
      await writeMade(made);
      const image = await ensureLxdImage({ log });
      if (image.imported) await writeMade({ ...made, image: image.fingerprint });
      return {
        socketPath: lxdSocketPath(),
        network: TEST_NETWORK,
        storagePool: TEST_POOL,
        subnet,
        image: LXD_NODE_IMAGE,
        providerFields: { network: TEST_NETWORK, storage_pool: TEST_POOL },
      };
    },
    { timeoutMs: 45 * 60_000, staleMs: 45 * 60_000 },
  );
}

/**
 * Drops this process's lease; the last lease removes the network, the pool, the image and the firewall rules the
 * helpers made (leases of processes that died count as released). Instances the tests made must be gone by then.
 */
export async function releaseLxdForTests(): Promise<void> {
  if (!ready) return;
  ready = undefined;
  await withDirLock(lock(), async () => {
    await rm(join(leaseDir(), String(process.pid)), { force: true });
    const live = (await readdir(leaseDir()).catch(() => [] as string[])).filter((pid) => isProcessAlive(Number(pid)));
    if (live.length > 0) return;
    const made = await readMade();
    const left: Made = {};
    if (made.image) await lxdCall("DELETE", `/1.0/images/${made.image}`).catch(keep(left, "image", made.image));
    for (const bridge of made.firewall ?? []) await dropBridgeRules(bridge);
    if (made.network) {
      await lxdCall("DELETE", `/1.0/networks/${made.network}`).catch(keep(left, "network", made.network));
      if (!left.network) await dropLxdRules(made.network);
    }
    if (made.pool) await lxdCall("DELETE", `/1.0/storage-pools/${made.pool}`).catch(keep(left, "pool", made.pool));
    await writeMade(left);
    await rm(leaseDir(), { recursive: true, force: true });
  });
}

const keep =
  <K extends "image" | "network" | "pool">(left: Made, what: K, value: string) =>
  (err: unknown) => {
    log(`could not remove the ${what} ${value}: ${String(err)}`);
    left[what] = value;
  };

async function readMade(): Promise<Made> {
  try {
    return JSON.parse(await readFile(madeFile(), "utf8")) as Made;
  } catch {
    return {};
  }
}

async function writeMade(made: Made): Promise<void> {
  await mkdir(stateDir(), { recursive: true });
  await writeFile(madeFile(), JSON.stringify(made));
}

async function exists(path: string): Promise<boolean> {
  return (await lxdRequest("GET", path)).status === 200;
}

/** The first 10.187.N.1/24 that overlaps no route of this machine and no other LXD network. */
async function freeSubnet(): Promise<string> {
  const taken: Array<[number, number]> = [];
  for (const line of (await readFile("/proc/net/route", "utf8")).split("\n").slice(1)) {
    const [, dest, , , , , , mask] = line.trim().split(/\s+/);
    if (dest && mask) taken.push([littleEndianIpv4(dest), littleEndianIpv4(mask)]);
  }
  const networks = ((await lxdCall("GET", "/1.0/networks?recursion=1")) ?? []) as Array<{ config?: Record<string, string> }>;
  for (const n of networks) {
    const cidr = n.config?.["ipv4.address"];
    const m = cidr ? /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(cidr) : null;
    if (m) taken.push([ipv4(m[1]!), prefixMask(Number(m[2]))]);
  }
  for (let third = 71; third < 255; third++) {
    const base = ipv4(`10.187.${third}.0`);
    const mask = prefixMask(24);
    // Two networks overlap when they agree on the bits of the shorter mask; the default route (mask 0) is no clash.
    const clashes = taken.some(([net, netMask]) => netMask !== 0 && (base & netMask & mask) >>> 0 === (net & netMask & mask) >>> 0);
    if (!clashes) return `10.187.${third}.1/24`;
  }
  throw new Error("no free 10.187.N.0/24 subnet for the LXD test bridge");
}

const ipv4 = (text: string) => text.split(".").reduce((acc, part) => ((acc << 8) | Number(part)) >>> 0, 0);
const prefixMask = (bits: number) => (bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0);
/** /proc/net/route writes addresses as little-endian hex. */
const littleEndianIpv4 = (hex: string) => {
  const n = parseInt(hex, 16);
  return (((n & 0xff) << 24) | ((n >>> 8) & 0xff) << 16 | ((n >>> 16) & 0xff) << 8 | (n >>> 24)) >>> 0;
};

/**
 * Docker sets the FORWARD policy to DROP, and with br_netfilter bridged frames pass through it: instances on the
 * bridge could not reach each other. LXD's xtables driver puts accept rules for its bridge first in FORWARD; its
 * nftables driver keeps them in a table of its own, where Docker's DROP still applies. Without LXD's rules in
 * FORWARD, accept rules for the bridge (marked with {@link RULE_COMMENT}) go first; returns whether any were added.
 */
async function acceptBridgedTraffic(bridge: string): Promise<boolean> {
  const callsIptables = (await readFile("/proc/sys/net/bridge/bridge-nf-call-iptables", "utf8").catch(() => "0")).trim() === "1";
  if (!callsIptables) return false;
  const rules = await iptables(["-S", "FORWARD"]);
  if (rules === undefined || !/^-P FORWARD DROP/m.test(rules)) return false;
  const accepts = (dir: string) => new RegExp(`^-A FORWARD ${dir} ${bridge} .*-j ACCEPT$`, "m").test(rules);
  if (accepts("-i") && accepts("-o")) return false;
  let added = false;
  for (const dir of ["-i", "-o"]) {
    const rule = [dir, bridge, "-m", "comment", "--comment", RULE_COMMENT, "-j", "ACCEPT"];
    if ((await iptables(["-C", "FORWARD", ...rule])) !== undefined) continue;
    if ((await iptables(["-I", "FORWARD", "1", ...rule])) === undefined) throw new Error(`iptables -I FORWARD ${rule.join(" ")} failed`);
    added = true;
  }
  return added;
}

async function dropBridgeRules(bridge: string): Promise<void> {
  for (const dir of ["-i", "-o"]) {
    const rule = [dir, bridge, "-m", "comment", "--comment", RULE_COMMENT, "-j", "ACCEPT"];
    while ((await iptables(["-D", "FORWARD", ...rule])) !== undefined);
  }
}

/**
 * LXD 5.0's xtables driver, on a machine whose iptables is nftables' shim, leaves the rules it made for a bridge
 * (comment "generated for LXD network <name>") behind when the network is deleted: they are removed here.
 */
async function dropLxdRules(bridge: string): Promise<void> {
  const mark = `"generated for LXD network ${bridge}"`;
  for (const table of ["filter", "nat", "mangle", "raw"]) {
    const rules = (await iptables(["-t", table, "-S"])) ?? "";
    for (const line of rules.split("\n").filter((l) => l.startsWith("-A ") && l.includes(mark))) {
      await iptables(["-t", table, "-D", ...shellWords(line.slice(3))]);
    }
  }
}

/** The words of an `iptables -S` line: blanks separate them, double quotes group them. */
function shellWords(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}

/** iptables' output, or undefined when it failed or is not installed. */
async function iptables(args: string[]): Promise<string | undefined> {
  try {
    return (await run("iptables", ["-w", ...args])).stdout;
  } catch {
    return undefined;
  }
}

/** `lxc ...`, its stdout; throws with stderr on failure. */
export async function lxc(args: string[]): Promise<string> {
  try {
    const running = run("lxc", args, { maxBuffer: 16 << 20 });
    // lxc init and launch read an instance config from stdin when it is not a terminal.
    running.child.stdin?.end();
    return (await running).stdout;
  } catch (err) {
    const e = err as { stderr?: string; code?: number };
    throw new Error(`lxc ${args.join(" ")}: exit ${e.code}: ${e.stderr ?? ""}`);
  }
}

/** A shell command in an instance (`lxc exec`); stdout, or throws with stderr on failure. */
export function lxcExec(instance: string, command: string): Promise<string> {
  return lxc(["exec", instance, "--", "sh", "-c", command]);
}

/** An instance as `GET /1.0/instances?recursion=1` lists it. */
export interface TestInstance {
  name: string;
  status: string;
  config: Record<string, string>;
  created_at: string;
}

/** Instances whose config has every key given (e.g. `user.corral.tenant`), running or not. */
export async function instancesWith(config: Record<string, string>): Promise<TestInstance[]> {
  const all = ((await lxdCall("GET", "/1.0/instances?recursion=1")) ?? []) as TestInstance[];
  return all.filter((i) => Object.entries(config).every(([k, v]) => i.config?.[k] === v));
}

/** Names of the instances carrying `user.corral.tenant=<tenant>` and every other key given. */
export async function tenantInstances(tenant: string, config: Record<string, string> = {}): Promise<string[]> {
  return (await instancesWith({ "user.corral.tenant": tenant, ...config })).map((i) => i.name).sort();
}

/** Stops and deletes every instance of a test tenant; for `after.always`. */
export async function removeTenantInstances(tenant: string): Promise<void> {
  for (const name of await tenantInstances(tenant)) await removeInstance(name);
}

/** Stops (forcibly) and deletes an instance; one already gone is fine. */
export async function removeInstance(name: string): Promise<void> {
  const path = `/1.0/instances/${encodeURIComponent(name)}`;
  const found = await lxdRequest("GET", path);
  if (found.status === 404) return;
  if (found.json?.metadata?.status !== "Stopped") {
    await lxdCall("PUT", `${path}/state`, { body: { action: "stop", force: true, timeout: -1 } }).catch(() => undefined);
  }
  await lxdCall("DELETE", path).catch(async (err: unknown) => {
    if ((await lxdRequest("GET", path)).status !== 404) throw err;
  });
}
