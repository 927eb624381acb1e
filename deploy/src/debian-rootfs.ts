import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { debianMainSource } from "./apt.js";
import { ensureInstalled, which } from "./binaries.js";
import { run } from "./exec.js";

/**
 * A Debian root file system made with debootstrap from this machine's own apt sources: what the Docker node image
 * (node-image.ts) and the LXD node image (lxd-image.ts) are built from. No image registry or image server is used.
 */

/** A Debian archive and suite debootstrap can install from. */
export interface AptSource {
  uri: string;
  suite: string;
}

export const FALLBACK_SOURCE: AptSource = { uri: "http://deb.debian.org/debian", suite: "bookworm" };
export const BUILD_TIMEOUT_MS = 30 * 60_000;

const DPKG_SLIM = `path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
`;

/** Options for {@link withDebianRootfs}. */
export interface RootfsOptions {
  /** Packages beyond debootstrap's minbase. */
  packages: readonly string[];
  /** Holds the temporary work directory (`<stateDir>/tmp/<prefix>-*`). */
  stateDir: string;
  /** Names the work directory. */
  prefix: string;
  log: (line: string) => void;
}

/**
 * Runs `use` with a fresh minbase root file system of the machine's Debian suite (`<work>/root`) and the work
 * directory around it; removes both afterwards, unmounting what a killed debootstrap left mounted.
 */
export async function withDebianRootfs<T>(options: RootfsOptions, use: (root: string, work: string, source: AptSource) => Promise<T>): Promise<T> {
  const debootstrap = await ensureInstalled(options.stateDir, ["debootstrap"], () => which("debootstrap"), options.log);
  const source = (await debianMainSource()) ?? FALLBACK_SOURCE;
  await mkdir(join(options.stateDir, "tmp"), { recursive: true });
  const work = await mkdtemp(join(options.stateDir, "tmp", `${options.prefix}-`));
  const root = join(work, "root");
  try {
    options.log(`debootstrap ${source.suite} from ${source.uri} into ${root}`);
    await runDebootstrap(debootstrap, source, root, options.packages, options.log);
    return await use(root, work, source);
  } finally {
    await removeWorkDir(work);
  }
}

/** Logs the first line of each kind debootstrap prints ("Retrieving", "Extracting", ...) and every warning. */
async function runDebootstrap(debootstrap: string, source: AptSource, root: string, packages: readonly string[], log: (line: string) => void): Promise<void> {
  const args = ["--variant=minbase", `--include=${packages.join(",")}`, source.suite, root, source.uri];
  const lines: string[] = [];
  const seen = new Set<string>();
  const child = spawn(debootstrap, args, { stdio: ["ignore", "pipe", "pipe"] });
  const timer = setTimeout(() => child.kill("SIGKILL"), BUILD_TIMEOUT_MS);
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on("line", (line) => {
      lines.push(line);
      if (lines.length > 30) {
        lines.shift();
      }
      const verb = /^I: (\S+)/.exec(line)?.[1];
      if (verb === undefined ? /^[WE]: /.test(line) : !seen.has(verb)) {
        seen.add(verb ?? "");
        log(`  ${line}`);
      }
    });
  }
  const exit = await new Promise<string | undefined>((resolvePromise, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => resolvePromise(code === 0 ? undefined : (signal ?? `exit code ${code}`)));
  }).finally(() => clearTimeout(timer));
  if (exit !== undefined) {
    throw new Error(`debootstrap ${args.join(" ")} failed (${exit}):\n${lines.slice(-15).join("\n")}`);
  }
}

/**
 * What every node image drops: SSH host keys (each node makes its own), apt's lists and caches, documentation and
 * locales; and, as Debian's slim images do, packages installed later in a node leave those out as well.
 */
export async function slimRootfs(root: string): Promise<void> {
  const sshDir = join(root, "etc", "ssh");
  for (const name of await readdir(sshDir)) {
    if (name.startsWith("ssh_host_")) {
      await rm(join(sshDir, name));
    }
  }
  await emptyDir(join(root, "var", "lib", "apt", "lists"), (name) => name !== "partial" && name !== "lock");
  await emptyDir(join(root, "var", "cache", "apt"), (name) => name.endsWith(".bin"));
  await emptyDir(join(root, "var", "cache", "apt", "archives"), (name) => name.endsWith(".deb"));
  for (const docs of ["doc", "man", "info"]) {
    await emptyDir(join(root, "usr", "share", docs), () => true);
  }
  await emptyDir(join(root, "usr", "share", "locale"), (name) => name !== "locale.alias");
  await writeFile(join(root, "etc", "dpkg", "dpkg.cfg.d", "corral-slim"), DPKG_SLIM);
}

/**
 * Makes SSH sessions cheap and container-proof: pam_loginuid optional (a container without CAP_AUDIT_CONTROL cannot
 * write /proc/self/loginuid, and a required entry would end every session at once), no pam_motd and pam_mail (they
 * run scripts and stat mailboxes for every session, exec channels included: most of a command's latency), and
 * root's login shell dash (it starts in a fraction of bash's time, and every action is a login shell's `-c`).
 */
export async function tuneSshSessions(root: string): Promise<void> {
  const pamSshd = join(root, "etc", "pam.d", "sshd");
  const pam = await readFile(pamSshd, "utf8");
  await writeFile(
    pamSshd,
    pam
      .replace(/^(session\s+)required(\s+pam_loginuid\.so)/m, "$1optional$2")
      .replace(/^session\s+optional\s+pam_(motd|mail)\.so.*\n/gm, ""),
  );
  const passwd = join(root, "etc", "passwd");
  await writeFile(passwd, (await readFile(passwd, "utf8")).replace(/^(root:[^\n]*:)\/bin\/bash$/m, "$1/bin/sh"));
}

export async function emptyDir(dir: string, shouldRemove: (name: string) => boolean): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  await Promise.all(names.filter(shouldRemove).map((name) => rm(join(dir, name), { recursive: true, force: true })));
}

/** debootstrap unmounts /proc, /sys and /dev binds in the target itself, but not when it was killed. */
async function removeWorkDir(work: string): Promise<void> {
  const mountinfo = await readFile("/proc/self/mountinfo", "utf8").catch(() => "");
  const mounts = mountinfo
    .split("\n")
    .map((line) => line.split(" ")[4]?.replace(/\\(\d{3})/g, (_m, octal: string) => String.fromCharCode(parseInt(octal, 8))))
    .filter((point): point is string => point !== undefined && point.startsWith(`${work}/`))
    .sort((a, b) => b.length - a.length);
  for (const point of mounts) {
    await run("umount", ["-l", point]);
  }
  await rm(work, { recursive: true, force: true });
}
