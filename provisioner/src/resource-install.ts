import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, lstat, mkdir, mkdtemp, readdir, readlink, rename, rm, stat, symlink } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { promisify } from "node:util";
import type { Logger } from "@corral/shared";
import { pathSegment, resourceDir, tenantDir } from "./paths.js";

const run = promisify(execFile);

export type ResourceKind = "automatortypes" | "providertypes";
const KINDS: readonly ResourceKind[] = ["automatortypes", "providertypes"];

/** One resource version a tenant's active set says must be installed. */
export interface DesiredResource {
  kind: ResourceKind;
  plugin: string;
  resourceType: string;
  name: string;
  version: number;
  /** Object name in the `corral_plugin_resources` object store. */
  object: string;
  format: "file" | "archive";
  /** Octal mode of a file resource (`"0755"`). @default "0644" */
  permissions?: string;
}

export interface InstallOptions {
  workDir: string;
  tenant: string;
  log: Logger;
  /** Downloads an object into `file` (which does not exist yet). */
  fetch: (object: string, file: string) => Promise<unknown>;
  /** Clock, ms. */
  now: () => number;
  /** How long a version no longer in use stays on disk (renamed aside) for tasks that still read it, ms. */
  retainMs: number;
  /** Makes a staged version readable by the tenant's sandboxed actions, before it is put in place. */
  shareWithTenant?: (dir: string) => Promise<void>;
}

export interface InstallReport {
  /** Versions downloaded and unpacked now. */
  downloaded: number;
  /** Links switched to another version or created. */
  switched: number;
  /** Links removed (resources no longer active). */
  removed: number;
}

/**
 * Makes a tenant's installed plugin resources exactly `desired` (as Coopr's provisioner did, made atomic):
 *
 * ```
 * <workDir>/<tenant>/.resources/<kind>/<plugin>/<type>/<name>/<version>/<name>   the bytes: a file, or the archive's directory
 * <workDir>/<tenant>/<kind>/<plugin>/<type>/<name> -> ../../../.resources/...    what plugins see (a symlink)
 * ```
 *
 * A version is downloaded and unpacked in a temporary directory and renamed into place; the link is replaced by
 * renaming a new symlink over it, so a task sees the old version or the new one, never a half-written one. A
 * version no longer linked is renamed aside and deleted after `retainMs` (running tasks may still read it).
 * Idempotent: what is already in place is kept.
 */
export async function installResources(options: InstallOptions, desired: readonly DesiredResource[]): Promise<InstallReport> {
  const report: InstallReport = { downloaded: 0, switched: 0, removed: 0 };
  const root = storeRoot(options.workDir, options.tenant);
  await mkdir(root, { recursive: true });
  const wanted = new Map<string, Map<string, number>>();
  const failures: unknown[] = [];
  for (const d of desired) {
    const typeKey = join(d.kind, pathSegment(d.plugin), pathSegment(d.resourceType));
    const names = wanted.get(typeKey) ?? new Map<string, number>();
    names.set(pathSegment(d.name), d.version);
    wanted.set(typeKey, names);
    try {
      if (await ensureVersion(options, root, d)) report.downloaded++;
      if (await switchLink(linkPath(options, d), join(versionDir(root, d), payloadName(d)))) report.switched++;
    } catch (err) {
      failures.push(err);
      options.log.warn("could not install a plugin resource", {
        tenant: options.tenant,
        resource: `${d.kind}/${d.plugin}/${d.resourceType}/${d.name}`,
        version: d.version,
        err,
      });
    }
  }
  report.removed = await retireUnwanted(options, root, wanted);
  if (failures.length > 0) throw new AggregateError(failures, `${failures.length} plugin resources could not be installed`);
  return report;
}

const storeRoot = (workDir: string, tenant: string) => join(tenantDir(workDir, tenant), ".resources");

function nameDir(root: string, d: DesiredResource): string {
  return join(root, d.kind, pathSegment(d.plugin), pathSegment(d.resourceType), pathSegment(d.name));
}

const versionDir = (root: string, d: DesiredResource) => join(nameDir(root, d), String(d.version));

/** An archive unpacks to a directory named exactly as the resource; a file keeps the escaped name. */
function payloadName(d: DesiredResource): string {
  if (d.format === "archive") {
    if (d.name === "" || d.name === "." || d.name === ".." || d.name.includes("/") || d.name.includes("\0")) {
      throw new Error(`archive resource name ${JSON.stringify(d.name)} cannot name a directory`);
    }
    return d.name;
  }
  return pathSegment(d.name);
}

const linkPath = (o: InstallOptions, d: DesiredResource) =>
  join(resourceDir(o.workDir, o.tenant, d.kind, d.plugin, d.resourceType), pathSegment(d.name));

function fileMode(d: DesiredResource): number {
  const p = d.permissions;
  return p !== undefined && /^[0-7]{3,4}$/.test(p) ? parseInt(p, 8) : 0o644;
}

async function isInstalled(path: string, d: DesiredResource): Promise<boolean> {
  try {
    const s = await lstat(path);
    return d.format === "archive" ? s.isDirectory() : s.isFile();
  } catch {
    return false;
  }
}

/** Downloads and unpacks the version unless it is already there. True when it downloaded. */
async function ensureVersion(o: InstallOptions, root: string, d: DesiredResource): Promise<boolean> {
  const target = versionDir(root, d);
  const payload = join(target, payloadName(d));
  if (await isInstalled(payload, d)) {
    if (d.format === "file" && ((await stat(payload)).mode & 0o7777) !== fileMode(d)) await chmod(payload, fileMode(d));
    return false;
  }
  await mkdir(nameDir(root, d), { recursive: true });
  const tmp = await mkdtemp(join(root, ".tmp-"));
  try {
    const download = join(tmp, "download");
    await o.fetch(d.object, download);
    const staged = join(tmp, "version");
    await mkdir(staged);
    if (d.format === "archive") {
      await run("tar", ["-xf", download, "-C", staged, "--no-same-owner"], { maxBuffer: 1024 * 1024 });
      const entries = await readdir(staged);
      const top = payloadName(d);
      if (entries.length !== 1 || entries[0] !== top || !(await lstat(join(staged, top))).isDirectory()) {
        throw new Error(`archive of ${d.name} does not unpack to the single directory ${top} (got ${entries.join(", ")})`);
      }
    } else {
      const file = join(staged, payloadName(d));
      await rename(download, file);
      await chmod(file, fileMode(d));
    }
    await o.shareWithTenant?.(staged);
    await rm(target, { recursive: true, force: true }); // a partial leftover of an interrupted install
    try {
      await rename(staged, target);
    } catch (err) {
      // Another provisioner sharing this work directory may have installed it in the meantime.
      if (!(await isInstalled(payload, d))) throw err;
    }
    return true;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Points `link` at `target` (relative symlink) by renaming a fresh symlink over it. True when it changed. */
async function switchLink(link: string, target: string): Promise<boolean> {
  const dir = dirname(link);
  await mkdir(dir, { recursive: true });
  const wanted = relative(dir, target);
  try {
    if ((await readlink(link)) === wanted) return false;
  } catch {
    // absent, or not a symlink
  }
  const tmpLink = join(dir, `.link-${randomBytes(6).toString("hex")}`);
  await symlink(wanted, tmpLink);
  try {
    await rename(tmpLink, link);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EISDIR" && code !== "ENOTEMPTY" && code !== "EEXIST" && code !== "ENOTDIR") throw err;
    await rm(link, { recursive: true, force: true }); // a directory in the way (not one of ours)
    await rename(tmpLink, link);
  } finally {
    await rm(tmpLink, { force: true });
  }
  return true;
}

async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}

const RETIRED = /^(\d+)\.retired-(\d+)$/;

/**
 * Removes links of resources that are no longer active (only links into the store), renames versions no longer
 * linked aside as `<version>.retired-<ms>`, and deletes retired versions older than `retainMs` and stale
 * temporary directories. Returns the number of links removed.
 */
async function retireUnwanted(o: InstallOptions, root: string, wanted: Map<string, Map<string, number>>): Promise<number> {
  let removed = 0;
  const now = o.now();
  for (const kind of KINDS) {
    for (const plugin of await entries(join(root, kind))) {
      for (const type of await entries(join(root, kind, plugin))) {
        const names = wanted.get(join(kind, plugin, type)) ?? new Map<string, number>();
        const linkDir = join(tenantDir(o.workDir, o.tenant), kind, plugin, type);
        for (const entry of await entries(linkDir)) {
          const path = join(linkDir, entry);
          if (entry.startsWith(".link-")) {
            await rm(path, { force: true });
            continue;
          }
          if (names.has(entry)) continue;
          try {
            if (!(await lstat(path)).isSymbolicLink()) continue;
            if (!resolve(linkDir, await readlink(path)).startsWith(root + sep)) continue;
            await rm(path, { force: true });
            removed++;
          } catch {
            // gone meanwhile
          }
        }
        const typeDir = join(root, kind, plugin, type);
        for (const name of await entries(typeDir)) {
          const dir = join(typeDir, name);
          const keep = names.get(name);
          for (const v of await entries(dir)) {
            const retired = RETIRED.exec(v);
            if (retired) {
              if (now - Number(retired[2]) >= o.retainMs) await rm(join(dir, v), { recursive: true, force: true });
            } else if (v !== String(keep)) {
              await rename(join(dir, v), join(dir, `${v}.retired-${now}`)).catch(() => {});
            }
          }
          if ((await entries(dir)).length === 0) await rm(dir, { recursive: true, force: true });
        }
      }
    }
  }
  for (const entry of await entries(root)) {
    if (!entry.startsWith(".tmp-")) continue;
    const path = join(root, entry);
    const age = await stat(path).then((s) => now - s.mtimeMs, () => 0);
    if (age > Math.max(o.retainMs, 3_600_000)) await rm(path, { recursive: true, force: true });
  }
  return removed;
}
