import { access, chmod, constants, copyFile, mkdir, mkdtemp, readdir, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { aptDownloadFromSuite, aptInstall } from "./apt.js";
import { withDirLock } from "./dir-lock.js";
import { outputTail, run } from "./exec.js";
import { defaultStateDir } from "./paths.js";

/** The oldest nats-server we run: 2.9 lacks `sync_interval` and later JetStream fixes. */
const MIN_NATS: Version = [2, 10, 0];
/** Debian suite whose nats-server package is new enough (2.10.27, a static binary). */
const NATS_SUITE = "trixie";
const SYSTEM_DIRS = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];

type Version = readonly [number, number, number];

/** Paths of the OpenLDAP programs the tests and launcher use. */
export interface SlapdBinaries {
  slapd: string;
  slapadd: string;
  slappasswd: string;
  ldapsearch: string;
}

const natsCache = new Map<string, Promise<string>>();
let redisCache: Promise<string> | undefined;
let slapdCache: Promise<SlapdBinaries> | undefined;

/**
 * Makes sure a nats-server 2.10 or newer exists and returns its path. Uses the one on PATH (or
 * `/usr/sbin/nats-server`) when new enough, else `<dataDir>/bin/nats-server`, downloading Debian
 * trixie's package and unpacking it there (under a lock, so concurrent processes install once).
 * @param dataDir where the binary cache lives. @default `<repo>/.corral` or `CORRAL_DATA_DIR`
 * @param log receives a line when it fetches
 */
export function ensureNatsServer(dataDir: string = defaultStateDir(), log: (line: string) => void = () => {}): Promise<string> {
  let found = natsCache.get(dataDir);
  if (!found) {
    found = findOrInstallNats(dataDir, log);
    natsCache.set(dataDir, found);
    found.catch(() => natsCache.delete(dataDir));
  }
  return found;
}

/**
 * Makes sure `redis-server` is installed (apt-get when missing) and returns its path.
 * @param dataDir where the install lock lives. @default `<repo>/.corral` or `CORRAL_DATA_DIR`
 * @param log receives a line when it installs
 */
export function ensureRedisServer(dataDir: string = defaultStateDir(), log: (line: string) => void = () => {}): Promise<string> {
  redisCache ??= ensureInstalled(
    dataDir,
    ["redis-server"],
    async () => {
      const path = await which("redis-server");
      return path ? path : undefined;
    },
    log,
  );
  redisCache.catch(() => (redisCache = undefined));
  return redisCache;
}

/**
 * Makes sure OpenLDAP's slapd and client tools are installed (packages slapd, ldap-utils) and
 * returns their paths.
 * @param dataDir where the install lock lives. @default `<repo>/.corral` or `CORRAL_DATA_DIR`
 */
export function ensureSlapd(dataDir: string = defaultStateDir()): Promise<SlapdBinaries> {
  slapdCache ??= ensureInstalled(dataDir, ["slapd", "ldap-utils"], async () => {
    const [slapd, slapadd, slappasswd, ldapsearch] = await Promise.all(
      ["slapd", "slapadd", "slappasswd", "ldapsearch"].map(which),
    );
    return slapd && slapadd && slappasswd && ldapsearch ? { slapd, slapadd, slappasswd, ldapsearch } : undefined;
  });
  slapdCache.catch(() => (slapdCache = undefined));
  return slapdCache;
}

/** Paths of what the `ansible` automator runs on a provisioner host. */
export interface AnsibleBinaries {
  /** `ansible-playbook` (Debian's ansible-core). */
  ansiblePlaybook: string;
  /** nss_wrapper's preload library: gives a sandbox's tenant user, which has no passwd entry, one for ssh. */
  nssWrapper: string;
}

let ansibleCache: Promise<AnsibleBinaries> | undefined;

/**
 * Makes sure ansible-core and nss_wrapper are installed (packages ansible-core, libnss-wrapper; apt-get when
 * missing) and returns their paths.
 * @param dataDir where the install lock lives. @default `<repo>/.corral` or `CORRAL_DATA_DIR`
 * @param log receives a line when it installs
 */
export function ensureAnsible(dataDir: string = defaultStateDir(), log: (line: string) => void = () => {}): Promise<AnsibleBinaries> {
  ansibleCache ??= ensureInstalled(
    dataDir,
    ["ansible-core", "libnss-wrapper"],
    async () => {
      const [ansiblePlaybook, nssWrapper] = await Promise.all([which("ansible-playbook"), findLibrary("libnss_wrapper.so")]);
      return ansiblePlaybook && nssWrapper ? { ansiblePlaybook, nssWrapper } : undefined;
    },
    log,
  );
  ansibleCache.catch(() => (ansibleCache = undefined));
  return ansibleCache;
}

/** A shared library in the system's library directories (multiarch ones included), or undefined. */
async function findLibrary(name: string): Promise<string | undefined> {
  const dirs = ["/usr/lib", "/lib", "/usr/local/lib"];
  for (const base of [...dirs]) {
    const entries = await readdir(base, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) if (entry.isDirectory() && entry.name.includes("-linux-")) dirs.push(join(base, entry.name));
  }
  for (const dir of dirs) {
    try {
      await access(join(dir, name), constants.R_OK);
      return join(dir, name);
    } catch {
      // keep looking
    }
  }
  return undefined;
}

/**
 * What `find` finds, installing `packages` with apt-get first when it finds nothing (under a lock in `dataDir`,
 * so concurrent processes install once).
 */
export async function ensureInstalled<T>(
  dataDir: string,
  packages: string[],
  find: () => Promise<T | undefined>,
  log: (line: string) => void = () => {},
): Promise<T> {
  const present = await find();
  if (present) {
    return present;
  }
  return withDirLock(join(dataDir, "locks", "apt.lock"), async () => {
    const installedMeanwhile = await find();
    if (installedMeanwhile) {
      return installedMeanwhile;
    }
    log(`apt-get install ${packages.join(" ")} (missing)`);
    await aptInstall(packages);
    const installed = await find();
    if (!installed) {
      throw new Error(`apt-get installed ${packages.join(" ")} but the programs are still not found`);
    }
    return installed;
  });
}

async function findOrInstallNats(dataDir: string, log: (line: string) => void): Promise<string> {
  const system = await which("nats-server");
  if (system && (await isNewEnough(system))) {
    return system;
  }
  const cached = join(dataDir, "bin", "nats-server");
  if (await isNewEnough(cached)) {
    return cached;
  }
  return withDirLock(join(dataDir, "locks", "nats-server.lock"), async () => {
    if (await isNewEnough(cached)) {
      return cached; // another process installed it while we waited
    }
    log(
      `fetching nats-server ${MIN_NATS.slice(0, 2).join(".")}+ (Debian ${NATS_SUITE}'s package) into ${cached}` +
        (system ? `: ${system} is older than ${MIN_NATS.join(".")}` : ""),
    );
    await installNatsFromDebian(cached);
    const version = await natsVersion(cached);
    if (!version || compare(version, MIN_NATS) < 0) {
      throw new Error(`installed ${cached} but it reports version ${version?.join(".") ?? "unknown"}, need >= 2.10`);
    }
    return cached;
  });
}

async function installNatsFromDebian(target: string): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), "corral-nats-install-"));
  try {
    let deb: string;
    try {
      deb = await aptDownloadFromSuite("nats-server", NATS_SUITE, work);
    } catch (err) {
      throw new Error(
        `nats-server >= 2.10 is not installed and fetching Debian ${NATS_SUITE}'s package failed: ${(err as Error).message}`,
      );
    }
    const unpacked = join(work, "unpacked");
    const result = await run("dpkg", ["-x", deb, unpacked]);
    if (result.code !== 0) {
      throw new Error(`dpkg -x ${deb} failed (exit ${result.code ?? result.signal}):\n${outputTail(result)}`);
    }
    await mkdir(dirname(target), { recursive: true });
    const partial = `${target}.partial-${process.pid}`;
    await copyFile(join(unpacked, "usr", "sbin", "nats-server"), partial);
    await chmod(partial, 0o755);
    await rename(partial, target);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function isNewEnough(binary: string): Promise<boolean> {
  const version = await natsVersion(binary);
  return version !== undefined && compare(version, MIN_NATS) >= 0;
}

/** Parses `nats-server: v2.10.27` from `--version`; undefined when the binary is missing or odd. */
async function natsVersion(binary: string): Promise<Version | undefined> {
  try {
    await access(binary, constants.X_OK);
    const result = await run(binary, ["--version"], { timeoutMs: 10_000 });
    const m = /v?(\d+)\.(\d+)\.(\d+)/.exec(result.stdout + result.stderr);
    return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
  } catch {
    return undefined;
  }
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** First executable named `name` on PATH or in the usual system dirs (root's sbin dirs included). */
export async function which(name: string): Promise<string | undefined> {
  const dirs = [...(process.env["PATH"] ?? "").split(delimiter).filter(Boolean), ...SYSTEM_DIRS];
  for (const dir of dirs) {
    const candidate = join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return undefined;
}
