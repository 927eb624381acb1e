import { lstat, mkdir, readFile, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { nodeDir, pathSegment, tenantDir, tenantTmpDir } from "../paths.js";
import { runShell, type ProcessOutcome, type RunShellOptions } from "../plugins/process.js";
import { detectIsolation } from "./detect.js";
import { ensureDir, giveTree, ROOT, shareTreeWithGroup, writeActionFile, type Owner } from "./files.js";
import { hiddenPaths, launchFor, type Isolation } from "./launch.js";
import { privatePaths } from "./private-paths.js";
import { removeBelow } from "./removal.js";
import { sandboxStateDir, TenantIds } from "./tenant-ids.js";
import { killProcessesOf, removeEntriesOwnedBy } from "./uid-leftovers.js";

export type { Isolation, SandboxMode } from "./launch.js";

/**
 * Where actions of `sim` nodes run on the provisioner host: one sandbox per tenant, so a tenant's action never
 * reads another tenant's files or the provisioner's own (see `Isolation` for the modes and provisioner/README.md, "Local actions").
 */
export interface LocalSandbox {
  /** How actions are isolated on this machine (found once). */
  isolation(): Promise<Isolation>;
  /** The sandbox of one tenant's actions, or why this tenant may run none here. */
  forActions(workDir: string, tenant: string): Promise<TenantSandbox | { refused: string }>;
  /** Readies a tenant's directory for a resource install; what it answers makes a staged tree readable by the tenant's actions. */
  forResources(workDir: string, tenant: string): Promise<ShareTree>;
  /**
   * Removes everything kept for these tenants here: their directories (synced resources, node directories,
   * temporary files, links never followed) and, with tenant users, every process still running as their users and
   * those users' files in the host's shared temporary directories (one walk for all); their ids are then retired
   * (`TenantIds.retire`), before the directories go, so a crash part-way leaves a directory to find again.
   * Idempotent. The caller makes sure that no action or resource install of these tenants runs meanwhile.
   */
  removeTenants(workDir: string, tenants: readonly string[]): Promise<void>;
}

/** Makes a staged resource tree (not yet visible under its final name) readable by the tenant's actions. */
export type ShareTree = (dir: string) => Promise<void>;

/** One tenant's local actions. */
export interface TenantSandbox {
  /** `<workDir>/<tenant>/nodes/<clusterId>/<nodeId>`, created and owned by the tenant's user. */
  nodeDir(clusterId: string, nodeId: string): Promise<string>;
  /** Writes a file an action reads (mode 0600, the tenant's user's), never through a link found in the way. */
  writeFile(path: string, content: string): Promise<void>;
  /**
   * Runs `/bin/sh -c command` in the sandbox. The environment is exactly `env` on top of a minimal base (`PATH`,
   * `HOME` = `cwd`, `TMPDIR` = the tenant's temporary directory, `LANG`, `LC_ALL`, `TZ`): never the provisioner's
   * own, which may hold credentials.
   */
  run(options: SandboxRunOptions): Promise<ProcessOutcome>;
}

export type SandboxRunOptions = Omit<RunShellOptions, "launcher" | "uid" | "gid">;

export interface LocalSandboxOptions {
  /** @default what `detectIsolation` finds */
  isolation?: Isolation;
  /** Paths besides the work directory that actions must not see. @default privatePaths(process.env) */
  privatePaths?: readonly string[];
  /**
   * Without any sandbox: where the one tenant allowed local actions is recorded. Every provisioner of this user on
   * the machine must share it, whatever its work directory: their actions all run as this user and can read each
   * other's files. @default $XDG_STATE_HOME (or ~/.local/state) /corral/unsandboxed-tenant
   */
  unsandboxedOwnerFile?: string;
}

const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const defaultUnsandboxedOwnerFile = () =>
  join(process.env["XDG_STATE_HOME"] || join(homedir(), ".local", "state"), "corral", "unsandboxed-tenant");

/** A sandbox for the actions of every tenant under any work directory. */
export function createLocalSandbox(options: LocalSandboxOptions = {}): LocalSandbox {
  let detected: Promise<Isolation> | undefined;
  const isolation = () => (detected ??= options.isolation ? Promise.resolve(options.isolation) : detectIsolation());
  let hidden: readonly string[] | undefined;
  const privateOnes = () => (hidden ??= options.privatePaths ?? privatePaths(process.env));
  const ids = new Map<string, TenantIds>();
  const idsOf = (workDir: string) => {
    let found = ids.get(workDir);
    if (!found) ids.set(workDir, (found = new TenantIds(workDir)));
    return found;
  };

  /** The tenant's directory, ready; its owner when tenants have users of their own. */
  const prepareTenant = async (workDir: string, tenant: string): Promise<{ dir: string; owner?: Owner }> => {
    const mode = await isolation();
    const dir = tenantDir(workDir, tenant);
    if (mode.mode !== "tenant-user") {
      // Never chmod here: in a user namespace the tenant's actions could have put a link in its place.
      await mkdir(tenantTmpDir(workDir, tenant), { recursive: true, mode: 0o700 });
      return { dir };
    }
    await mkdir(workDir, { recursive: true });
    // Others may pass through the work directory to their own, never list it.
    await ensureDir(workDir, ROOT, 0o711);
    await ensureDir(sandboxStateDir(workDir), ROOT, 0o700);
    const id = await idsOf(workDir).of(tenant);
    // Root's, the tenant's group may read: the provisioner alone changes resources it later reads or copies as root.
    await ensureDir(dir, { uid: 0, gid: id }, 0o750);
    // Like a machine's /tmp: anyone in it (only the tenant) may add files; root's, so the tenant cannot swap it.
    await ensureDir(tenantTmpDir(workDir, tenant), ROOT, 0o1777);
    return { dir, owner: { uid: id, gid: id } };
  };

  const refusal = async (tenant: string): Promise<string | undefined> => {
    const file = options.unsandboxedOwnerFile ?? defaultUnsandboxedOwnerFile();
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    const segment = pathSegment(tenant);
    try {
      await writeFile(file, segment, { flag: "wx", mode: 0o600 });
      return undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const owner = (await readFile(file, "utf8")).trim();
    if (owner === segment) return undefined;
    return (
      `local actions cannot be sandboxed on this provisioner (it does not run as root and user namespaces are not ` +
      `available), so only the tenant that ran the first one (${owner}, recorded in ${file}) may run them; run the ` +
      `provisioner as root or allow unprivileged user namespaces`
    );
  };

  return {
    isolation,
    async forActions(workDir, tenant) {
      const mode = await isolation();
      if (mode.mode === "unsandboxed") {
        const refused = await refusal(tenant);
        if (refused) return { refused };
      }
      const { dir, owner } = await prepareTenant(workDir, tenant);
      return {
        nodeDir: (clusterId, nodeId) => prepareNodeDir(workDir, tenant, clusterId, nodeId, owner),
        writeFile: (path, content) => writeActionFile(path, content, owner),
        run(run) {
          const tmpDir = tenantTmpDir(workDir, tenant);
          const view = { tenantDir: dir, tmpDir, cwd: run.cwd, hidden: hiddenPaths(workDir, privateOnes()) };
          const env = { ...baseEnvironment(run.cwd, tmpDir), ...Object.fromEntries(Object.entries(run.env).filter(([, v]) => v !== undefined)) };
          return runShell({ ...run, env, ...launchFor(mode, owner?.uid, view) });
        },
      };
    },
    async forResources(workDir, tenant) {
      const { owner } = await prepareTenant(workDir, tenant);
      return owner ? (dir) => shareTreeWithGroup(dir, owner.gid) : async () => {};
    },
    async removeTenants(workDir, tenants) {
      if ((await isolation()).mode === "tenant-user") {
        const held = new Set<number>();
        for (const tenant of tenants) {
          const id = await idsOf(workDir).held(tenant);
          if (id !== undefined) held.add(id);
        }
        await killProcessesOf(held);
        await removeEntriesOwnedBy(held);
        for (const tenant of tenants) await idsOf(workDir).retire(tenant);
      }
      for (const tenant of tenants) await removeBelow(workDir, [pathSegment(tenant)]);
    },
  };
}

/**
 * The node's directory; with tenant users, `nodes/` and the cluster's directory are root's (the tenant may only
 * read). Made again when the cluster's directory went away meanwhile (a sim DELETE of the cluster's last other node
 * removes it once empty).
 */
async function prepareNodeDir(workDir: string, tenant: string, clusterId: string, nodeId: string, owner: Owner | undefined): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await makeNodeDir(workDir, tenant, clusterId, nodeId, owner);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT" || attempt >= 3) throw err;
    }
  }
}

async function makeNodeDir(workDir: string, tenant: string, clusterId: string, nodeId: string, owner: Owner | undefined): Promise<string> {
  const dir = nodeDir(workDir, tenant, clusterId, nodeId);
  if (!owner) {
    await mkdir(dir, { recursive: true });
    return dir;
  }
  const readable: Owner = { uid: 0, gid: owner.gid };
  await ensureDir(join(tenantDir(workDir, tenant), "nodes"), readable, 0o750);
  await ensureDir(dirname(dir), readable, 0o750);
  const existing = await lstat(dir).catch(() => undefined);
  // Made before actions were sandboxed (root's): hand over everything in it once.
  if (existing?.isDirectory() && existing.uid !== owner.uid) await giveTree(dir, owner);
  await ensureDir(dir, owner, 0o700);
  return dir;
}

/** `TMPDIR` matters where no mount namespace puts the tenant's temporary directory at `/tmp`. */
function baseEnvironment(cwd: string, tmpDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env["PATH"] ?? DEFAULT_PATH, HOME: cwd, TMPDIR: tmpDir };
  for (const name of ["LANG", "LC_ALL", "TZ"]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

let shared: LocalSandbox | undefined;

/** The sandbox every plugin and resource sync of this process uses unless given another. */
export function defaultSandbox(): LocalSandbox {
  return (shared ??= createLocalSandbox());
}
