import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { outputTail, run } from "./exec.js";

const APT_ENV = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
/** Wait for dpkg's own lock instead of failing when another apt-get runs. */
const WAIT_FOR_DPKG_LOCK = ["-o", "DPkg::Lock::Timeout=300"];
const FALLBACK_DEBIAN_URI = "http://deb.debian.org/debian";

let updated: Promise<void> | undefined;

/**
 * Installs Debian packages with `apt-get install -y` (running `apt-get update` once per process
 * first). Needs root; throws an error naming the packages and apt's output when it fails.
 */
export async function aptInstall(packages: readonly string[]): Promise<void> {
  requireAptAsRoot(packages);
  updated ??= aptGet(["update"], "apt-get update").catch((err: unknown) => {
    updated = undefined;
    throw err;
  });
  await updated;
  await aptGet([...WAIT_FOR_DPKG_LOCK, "install", "-y", "--no-install-recommends", ...packages], `apt-get install ${packages.join(" ")}`);
}

/**
 * Downloads one package's `.deb` from another Debian suite (for example `trixie`) without touching
 * the machine's apt configuration: a temporary sources list with the machine's own Debian mirror
 * and temporary lists, all under `work` (which the caller removes), then `apt-get download`.
 * Returns the path of the `.deb`.
 */
export async function aptDownloadFromSuite(pkg: string, suite: string, work: string): Promise<string> {
  requireAptAsRoot([pkg]);
  const lists = join(work, "lists");
  const debs = join(work, "debs");
  await mkdir(join(lists, "partial"), { recursive: true });
  await mkdir(debs, { recursive: true });
  const sourceList = join(work, "sources.list");
  await writeFile(sourceList, `deb ${await debianMirrorUri()} ${suite} main\n`);
  const isolated = [
    "-o", `Dir::Etc::SourceList=${sourceList}`,
    "-o", "Dir::Etc::SourceParts=/dev/null",
    "-o", `Dir::State::Lists=${lists}`,
    // Keep apt's binary caches of the real sources untouched.
    "-o", "Dir::Cache::pkgcache=",
    "-o", "Dir::Cache::srcpkgcache=",
    // The temp dirs are private to root; apt's `_apt` sandbox user could not write them.
    "-o", "APT::Sandbox::User=root",
  ];
  await aptGet([...isolated, "update", "--error-on=any"], `apt-get update (${suite})`);
  await aptGet([...isolated, "download", pkg], `apt-get download ${pkg} (${suite})`, debs);
  const deb = (await readdir(debs)).find((f) => f.startsWith(`${pkg}_`) && f.endsWith(".deb"));
  if (!deb) {
    throw new Error(`apt-get download ${pkg} (${suite}) succeeded but left no .deb in ${debs}`);
  }
  return join(debs, deb);
}

/**
 * The Debian archive URI this machine's apt already uses (from `/etc/apt/sources.list` and
 * `/etc/apt/sources.list.d/*.list|*.sources`), skipping security and third-party repositories.
 * @default "http://deb.debian.org/debian" when none is found
 */
export async function debianMirrorUri(): Promise<string> {
  return (await debianMainSource())?.uri ?? FALLBACK_DEBIAN_URI;
}

/**
 * The first Debian main archive and suite in this machine's apt sources (one-line and deb822 files), skipping
 * security, updates, backports and third-party repositories; undefined when there is none.
 */
export async function debianMainSource(): Promise<{ uri: string; suite: string } | undefined> {
  const files = ["/etc/apt/sources.list"];
  try {
    const dir = "/etc/apt/sources.list.d";
    for (const f of (await readdir(dir)).sort()) {
      if (f.endsWith(".list") || f.endsWith(".sources")) {
        files.push(join(dir, f));
      }
    }
  } catch {
    // no sources.list.d
  }
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch {
      continue;
    }
    const entries = file.endsWith(".sources") ? parseDeb822(text) : parseOneLine(text);
    const found = entries.find(isDebianMain);
    if (found) {
      return { uri: found.uri.replace(/\/+$/, ""), suite: found.suite };
    }
  }
  return undefined;
}

interface SourceEntry {
  uri: string;
  suite: string;
  components: string[];
}

function isDebianMain(e: SourceEntry): boolean {
  return (
    e.components.includes("main") &&
    /debian/i.test(e.uri) &&
    !/security/i.test(e.uri) &&
    !/-(security|updates|backports)$|\/updates$/.test(e.suite)
  );
}

function parseOneLine(text: string): SourceEntry[] {
  const out: SourceEntry[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.replace(/#.*/, "").replace(/\[[^\]]*\]/, " ").trim();
    const [type, uri, suite, ...components] = line.split(/\s+/);
    if (type === "deb" && uri && suite) {
      out.push({ uri, suite, components });
    }
  }
  return out;
}

function parseDeb822(text: string): SourceEntry[] {
  const out: SourceEntry[] = [];
  for (const stanza of text.split(/\n\s*\n/)) {
    const fields = new Map<string, string>();
    for (const line of stanza.split("\n")) {
      const m = /^([A-Za-z-]+):\s*(.*)$/.exec(line);
      if (m?.[1] && m[2] !== undefined) {
        fields.set(m[1].toLowerCase(), m[2].trim());
      }
    }
    const words = (name: string): string[] => (fields.get(name) ?? "").split(/\s+/).filter(Boolean);
    if (!words("types").includes("deb") || fields.get("enabled")?.toLowerCase() === "no") {
      continue;
    }
    for (const uri of words("uris")) {
      for (const suite of words("suites")) {
        out.push({ uri, suite, components: words("components") });
      }
    }
  }
  return out;
}

function requireAptAsRoot(packages: readonly string[]): void {
  if (process.getuid?.() !== 0) {
    throw new Error(
      `cannot install ${packages.join(", ")}: apt-get needs root. Install them yourself ` +
        `(sudo apt-get install ${packages.join(" ")}) and run again.`,
    );
  }
}

async function aptGet(args: string[], what: string, cwd?: string): Promise<void> {
  let result;
  try {
    result = await run("apt-get", args, { env: APT_ENV, cwd });
  } catch (err) {
    throw new Error(`${what} could not start: ${(err as Error).message} (is this a Debian/Ubuntu machine?)`);
  }
  if (result.code !== 0) {
    throw new Error(`${what} failed (exit ${result.code ?? result.signal}):\n${outputTail(result)}`);
  }
}
