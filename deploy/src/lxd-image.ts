import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { mkdir, readdir, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { BUILD_TIMEOUT_MS, emptyDir, slimRootfs, tuneSshSessions, withDebianRootfs } from "./debian-rootfs.js";
import { withDirLock } from "./dir-lock.js";
import { ensureLxd, lxdCall, lxdRequest } from "./lxd-image-daemon.js";
import { defaultStateDir } from "./paths.js";

/** The LXD image alias every `lxd` provider node uses by default. */
export const LXD_NODE_IMAGE = "corral/node-bookworm";
/** Bumped whenever the build changes, so an image (and a cached tarball) of an older build is rebuilt. */
export const LXD_IMAGE_REVISION = "1";
const REVISION_PROPERTY = "corral.revision";

/** Options for {@link ensureLxdImage}. */
export interface LxdImageOptions {
  /** Receives progress lines. @default no output */
  log?: (line: string) => void;
  /** Rebuild the tarball and import it again even when the image exists. @default false */
  force?: boolean;
  /** Holds the cached tarball (`lxd-image/`), the build's temporary root file system and the lock. @default `<repo>/.corral` or `CORRAL_DATA_DIR` */
  stateDir?: string;
}

/** What {@link ensureLxdImage} found or made. */
export interface LxdImage {
  alias: string;
  fingerprint: string;
  /** Whether this call imported it (it was missing, older, or `force`). */
  imported: boolean;
}

/**
 * systemd as init, sshd, python3 (the demo services, Ansible-style automation) and cloud-init (the provider's
 * user-data), with ifupdown and dhclient for eth0. debootstrap does not resolve virtual packages: python3-cffi-backend
 * provides the `python3-cffi-backend-api-*` that cloud-init's python3-cryptography depends on.
 */
const PACKAGES = [
  "systemd",
  "systemd-sysv",
  "openssh-server",
  "python3",
  "cloud-init",
  "python3-cffi-backend",
  "ifupdown",
  "isc-dhcp-client",
  "procps",
  "iproute2",
  "netcat-openbsd",
  "sudo",
  "ca-certificates",
  "tar",
  "gzip",
];

/**
 * Makes sure LXD has the image {@link LXD_NODE_IMAGE} of the current revision: starts LXD when needed
 * ({@link ensureLxd}); when the alias is missing or names an image of an older revision (or `force`), imports the
 * cached tarball, building it first from the machine's Debian mirror with debootstrap when there is none. Concurrent
 * callers, in this or other processes, build and import once (a lock under `stateDir`).
 */
export async function ensureLxdImage(opts: LxdImageOptions = {}): Promise<LxdImage> {
  const log = opts.log ?? (() => {});
  const stateDir = opts.stateDir ?? defaultStateDir();
  await ensureLxd({ log, stateDir });
  if (!opts.force) {
    const present = await currentImage();
    if (present) return { alias: LXD_NODE_IMAGE, fingerprint: present, imported: false };
  }
  return withDirLock(
    join(stateDir, "locks", "lxd-image.lock"),
    async () => {
      if (!opts.force) {
        const present = await currentImage();
        if (present) {
          log(`${LXD_NODE_IMAGE} was imported by another process meanwhile`);
          return { alias: LXD_NODE_IMAGE, fingerprint: present, imported: false };
        }
      }
      const tarball = await ensureTarball(stateDir, opts.force === true, log);
      const fingerprint = await importTarball(tarball, log);
      return { alias: LXD_NODE_IMAGE, fingerprint, imported: true };
    },
    { timeoutMs: BUILD_TIMEOUT_MS, staleMs: BUILD_TIMEOUT_MS },
  );
}

/** The fingerprint the alias names when that image is of the current revision. */
async function currentImage(): Promise<string | undefined> {
  const alias = await lxdRequest("GET", `/1.0/images/aliases/${encodeURIComponent(LXD_NODE_IMAGE)}`);
  if (alias.status === 404) return undefined;
  const fingerprint = alias.json?.metadata?.target as string | undefined;
  if (!fingerprint) throw new Error(`lxd: GET alias ${LXD_NODE_IMAGE} failed (${alias.status}): ${alias.json?.error ?? alias.text}`);
  const image = await lxdRequest("GET", `/1.0/images/${fingerprint}`);
  return image.json?.metadata?.properties?.[REVISION_PROPERTY] === LXD_IMAGE_REVISION ? fingerprint : undefined;
}

/** The tarball of the current revision: `<stateDir>/lxd-image/corral-node-bookworm.r<revision>.tar`, built when missing. */
async function ensureTarball(stateDir: string, force: boolean, log: (line: string) => void): Promise<string> {
  const dir = join(stateDir, "lxd-image");
  const tarball = join(dir, `corral-node-bookworm.r${LXD_IMAGE_REVISION}.tar`);
  if (!force && existsSync(tarball)) {
    log(`using the tarball built before: ${tarball}`);
    return tarball;
  }
  await mkdir(dir, { recursive: true });
  for (const old of await readdir(dir)) if (old.startsWith("corral-node-bookworm.")) await rm(join(dir, old), { force: true });
  const started = Date.now();
  await withDebianRootfs({ packages: PACKAGES, stateDir, prefix: "lxd-image", log }, async (root, work, source) => {
    log("configuring the root file system");
    await configureRootfs(root);
    await writeImageMetadata(work, source.suite);
    // A unified image tarball: metadata.yaml, templates/ and rootfs/ at its top.
    await rename(root, join(work, "rootfs"));
    log(`packing ${tarball}`);
    const partial = `${tarball}.partial-${process.pid}`;
    await tar(work, partial);
    await rename(partial, tarball);
  });
  const size = (await stat(tarball)).size;
  log(`built ${tarball} (${Math.round(size / 1e6)} MB) in ${Math.round((Date.now() - started) / 1000)} s`);
  return tarball;
}

const CLOUD_CFG = (datasources: string[]) => `# Corral's LXD node image (npm run lxd-image).
# LXD's datasource reads the instance's user.user-data through /dev/lxd; the NoCloud seed the image's templates
# write at creation carries the same keys where /dev/lxd is missing.
datasource_list: [${datasources.join(", ")}]
# eth0 is configured by ifupdown (/etc/network/interfaces): one DHCP client, whatever the datasource says.
network: {config: disabled}
# One Ed25519 host key: RSA and ECDSA keys cost up to a second of CPU per node at first boot.
ssh_genkeytypes: [ed25519]
`;

const SSHD_CONFIG = `# corral/node-bookworm: many parallel sessions from the provisioner, logins by key only.
PermitRootLogin prohibit-password
PasswordAuthentication no
UseDNS no
PrintMotd no
PrintLastLog no
MaxSessions 64
MaxStartups 200:30:400
ClientAliveInterval 15
`;

const INTERFACES = `auto lo
iface lo inet loopback

auto eth0
iface eth0 inet dhcp
`;

/** Makes a host key when nothing else did: an image whose cloud-init does not run, or a key pushed through LXD's file API. */
const HOSTKEY_UNIT = `[Unit]
Description=SSH host key of a Corral node whose cloud-init made none
After=cloud-init.service
Before=ssh.service
ConditionPathExists=!/etc/ssh/ssh_host_ed25519_key

[Service]
Type=oneshot
ExecStart=/usr/bin/ssh-keygen -q -t ed25519 -N "" -f /etc/ssh/ssh_host_ed25519_key

[Install]
WantedBy=multi-user.target
`;

async function configureRootfs(root: string): Promise<void> {
  await slimRootfs(root);
  await tuneSshSessions(root);
  const sshDir = join(root, "etc", "ssh");
  await mkdir(join(sshDir, "sshd_config.d"), { recursive: true });
  await writeFile(join(sshDir, "sshd_config.d", "corral.conf"), SSHD_CONFIG);
  await writeFile(join(root, "etc", "network", "interfaces"), INTERFACES);

  const hasLxdDatasource = existsSync(join(root, "usr", "lib", "python3", "dist-packages", "cloudinit", "sources", "DataSourceLXD.py"));
  await writeFile(join(root, "etc", "cloud", "cloud.cfg.d", "90-corral.cfg"), CLOUD_CFG([...(hasLxdDatasource ? ["LXD"] : []), "NoCloud", "None"]));

  const units = join(root, "etc", "systemd", "system");
  await writeFile(join(units, "corral-ssh-hostkey.service"), HOSTKEY_UNIT);
  await mkdir(join(units, "multi-user.target.wants"), { recursive: true });
  await symlink("/etc/systemd/system/corral-ssh-hostkey.service", join(units, "multi-user.target.wants", "corral-ssh-hostkey.service"));
  // No package upkeep timers on nodes that live for one cluster.
  for (const timer of ["apt-daily.timer", "apt-daily-upgrade.timer"]) {
    await rm(join(units, "timers.target.wants", timer), { force: true });
    await symlink("/dev/null", join(units, timer)).catch(() => undefined);
  }
  // Each instance makes its own machine id at first boot (an empty file asks systemd to); LXD gives it its own /dev.
  await writeFile(join(root, "etc", "machine-id"), "");
  await rm(join(root, "var", "lib", "dbus", "machine-id"), { force: true });
  await emptyDir(join(root, "dev"), () => true);
}

/** Rendered by LXD when an instance is made (pongo2): its name, and the NoCloud seed from its `user.*` keys. */
const TEMPLATES: Record<string, { path: string; text: string; defaultValue?: string }> = {
  "hostname.tpl": { path: "/etc/hostname", text: "{{ container.name }}\n" },
  "hosts.tpl": {
    path: "/etc/hosts",
    text: "127.0.0.1 localhost\n127.0.1.1 {{ container.name }}\n::1 localhost ip6-localhost ip6-loopback\nff02::1 ip6-allnodes\nff02::2 ip6-allrouters\n",
  },
  "cloud-init-meta.tpl": {
    path: "/var/lib/cloud/seed/nocloud-net/meta-data",
    text: 'instance-id: {{ container.name }}\nlocal-hostname: {{ container.name }}\n{{ config_get("user.meta-data", "") }}\n',
  },
  "cloud-init-user.tpl": {
    path: "/var/lib/cloud/seed/nocloud-net/user-data",
    text: '{{ config_get("user.user-data", properties.default) }}\n',
    defaultValue: "#cloud-config\n{}\n",
  },
  "cloud-init-vendor.tpl": {
    path: "/var/lib/cloud/seed/nocloud-net/vendor-data",
    text: '{{ config_get("user.vendor-data", properties.default) }}\n',
    defaultValue: "#cloud-config\n{}\n",
  },
};

/** `metadata.yaml` (JSON, which YAML reads) and `templates/` of a unified LXD image tarball. */
async function writeImageMetadata(work: string, suite: string): Promise<void> {
  const architecture = lxdArchitecture();
  const templates: Record<string, unknown> = {};
  await mkdir(join(work, "templates"), { recursive: true });
  for (const [file, t] of Object.entries(TEMPLATES)) {
    await writeFile(join(work, "templates", file), t.text);
    templates[t.path] = { when: ["create", "copy"], template: file, ...(t.defaultValue ? { properties: { default: t.defaultValue } } : {}) };
  }
  const metadata = {
    architecture,
    creation_date: Math.floor(Date.now() / 1000),
    properties: {
      description: `Corral node: Debian ${suite} with systemd, openssh-server, python3 and cloud-init`,
      os: "debian",
      release: suite,
      architecture,
      variant: "cloud",
      [REVISION_PROPERTY]: LXD_IMAGE_REVISION,
    },
    templates,
  };
  await writeFile(join(work, "metadata.yaml"), `${JSON.stringify(metadata, null, 2)}\n`);
}

/** The LXD architecture name of this machine. */
function lxdArchitecture(): string {
  return ({ x64: "x86_64", arm64: "aarch64", arm: "armv7l", ppc64: "ppc64le", s390x: "s390x", riscv64: "riscv64" } as Record<string, string>)[process.arch] ?? process.arch;
}

/** An uncompressed tar of the image (LXD unpacks it once per instance: no decompression on every node). */
function tar(work: string, out: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn("tar", ["--numeric-owner", "-C", work, "-cf", out, "metadata.yaml", "templates", "rootfs"], { stdio: ["ignore", "ignore", "pipe"] });
    let errors = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (errors += chunk));
    child.once("error", reject);
    child.once("close", (code) => (code === 0 ? resolvePromise() : reject(new Error(`tar of the LXD image failed (exit ${code}): ${errors.trim()}`))));
  });
}

/**
 * Imports the tarball (unless LXD has an image of its fingerprint already) and points the alias at it; the image the
 * alias named before is deleted.
 */
async function importTarball(tarball: string, log: (line: string) => void): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(createReadStream(tarball), hash);
  const fingerprint = hash.digest("hex");
  if ((await lxdRequest("GET", `/1.0/images/${fingerprint}`)).status !== 200) {
    log(`importing ${tarball} into LXD`);
    await lxdCall("POST", "/1.0/images", {
      body: createReadStream(tarball),
      headers: { "X-LXD-filename": "corral-node-bookworm.tar", "X-LXD-public": "false", "Content-Length": String((await stat(tarball)).size) },
      timeoutMs: 600_000,
    });
  }
  const aliasPath = `/1.0/images/aliases/${encodeURIComponent(LXD_NODE_IMAGE)}`;
  const previous = await lxdRequest("GET", aliasPath);
  const before = previous.status === 200 ? (previous.json?.metadata?.target as string | undefined) : undefined;
  const description = "Corral node image (npm run lxd-image)";
  if (before === undefined) {
    await lxdCall("POST", "/1.0/images/aliases", { body: { name: LXD_NODE_IMAGE, target: fingerprint, description } });
  } else if (before !== fingerprint) {
    await lxdCall("PUT", aliasPath, { body: { target: fingerprint, description } });
    await lxdCall("DELETE", `/1.0/images/${before}`).catch((err: unknown) => log(`the previous image ${before} stays: ${String(err)}`));
  }
  log(`${LXD_NODE_IMAGE} is image ${fingerprint.slice(0, 12)}`);
  return fingerprint;
}
