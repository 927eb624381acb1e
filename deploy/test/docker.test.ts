import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import test from "ava";
import { ensureDocker, ensureNodeImage, isDockerAvailable, NODE_IMAGE } from "@corral/deploy";
import {
  createTestNetwork,
  dockerExec,
  ensureDockerForTests,
  readBanner,
  removeTestContainers,
  startSshHost,
  TEST_LABEL,
} from "../../test/helpers/docker-hosts.js";

const exec = promisify(execFile);

/** Containers and networks labelled `corral.test=1`, with the pid of the test process that made them. */
async function labelled(kind: "ps -a" | "network ls"): Promise<{ id: string; pid: number }[]> {
  const { stdout } = await exec("docker", [...kind.split(" "), "--filter", `label=${TEST_LABEL}`, "--format", '{{.ID}} {{.Label "corral.test.pid"}}']);
  return stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [id = "", pid = ""] = line.split(" ");
      return { id, pid: Number(pid) };
    });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function ssh(key: string, target: string, command: string): Promise<string> {
  const options = ["StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null", "BatchMode=yes", "ConnectTimeout=10", "LogLevel=ERROR"];
  const { stdout } = await exec("ssh", ["-i", key, ...options.flatMap((o) => ["-o", o]), target, command]);
  return stdout.trim();
}

test.after.always(() => removeTestContainers());

test.serial("docker - ensureDocker returns once the daemon answers /_ping", async (t) => {
  await ensureDocker();
  t.true(await isDockerAvailable());
});

test.serial("docker - isDockerAvailable is false for a socket nobody listens on", async (t) => {
  const saved = process.env["DOCKER_HOST"];
  process.env["DOCKER_HOST"] = `unix://${join(tmpdir(), `corral-no-docker-${randomUUID()}.sock`)}`;
  try {
    t.false(await isDockerAvailable());
  } finally {
    if (saved === undefined) {
      delete process.env["DOCKER_HOST"];
    } else {
      process.env["DOCKER_HOST"] = saved;
    }
  }
});

test.serial("docker - ensureNodeImage builds the image once for concurrent callers and then reuses it", async (t) => {
  t.timeout(30 * 60_000); // a first build runs debootstrap: a minute or more
  const lines: string[] = [];
  const log = (line: string): void => {
    lines.push(line);
    t.log(line);
  };
  const images = await Promise.all([ensureNodeImage({ log }), ensureNodeImage({ log })]);
  t.deepEqual(images, [NODE_IMAGE, NODE_IMAGE]);
  t.true(lines.filter((l) => l.startsWith("debootstrap ")).length <= 1, "at most one build");

  const started = Date.now();
  t.is(await ensureNodeImage(), NODE_IMAGE);
  t.true(Date.now() - started < 5_000, `an existing image is reused at once (took ${Date.now() - started} ms)`);
  const { stdout } = await exec("docker", ["image", "inspect", "-f", '{{index .Config.Labels "corral.image"}} {{json .Config.Cmd}}', NODE_IMAGE]);
  t.is(stdout.trim(), 'node ["/usr/local/sbin/corral-node-init"]');
});

test.serial("docker - an ssh host greets with an OpenSSH banner on its container IP; a noSshd host refuses", async (t) => {
  t.timeout(5 * 60_000);
  await ensureDockerForTests();
  const network = await createTestNetwork(`corral-test-${randomUUID().slice(0, 8)}`);
  const [host, silent] = await Promise.all([
    startSshHost({ network: network.name }),
    startSshHost({ network: network.name, noSshd: true }),
  ]);
  t.regex(await readBanner(host.ip, 22), /^SSH-2\.0-OpenSSH/);
  const refused = await t.throwsAsync(readBanner(silent.ip, 22));
  t.is((refused as NodeJS.ErrnoException | undefined)?.code, "ECONNREFUSED");

  await Promise.all([host.stop(), silent.stop(), host.stop()]);
  await network.remove();
});

test.serial("docker - root and the sudo user log in with the key from the environment; the root password is set", async (t) => {
  t.timeout(5 * 60_000);
  await ensureDockerForTests();
  const dir = await mkdtemp(join(tmpdir(), "corral-ssh-key-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const key = join(dir, "id_ed25519");
  await exec("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", key]);
  const network = await createTestNetwork(`corral-test-${randomUUID().slice(0, 8)}`);
  const host = await startSshHost({
    network: network.name,
    authorizedKeys: await readFile(`${key}.pub`, "utf8"),
    rootPassword: "root-secret",
    user: { name: "corral" },
  });

  t.is(await ssh(key, `root@${host.ip}`, "id -u"), "0");
  t.is(await ssh(key, `corral@${host.ip}`, "id -un; sudo -n id -u"), "corral\n0");
  const shadow = await dockerExec(host.id, ["getent", "shadow", "root"]);
  t.is(shadow.exitCode, 0);
  t.regex(shadow.stdout, /^root:\$/, "root has a password hash");
  const missing = await dockerExec(host.id, ["sh", "-c", "echo out; echo err >&2; exit 3"]);
  t.deepEqual(missing, { exitCode: 3, stdout: "out\n", stderr: "err\n" });
});

test.serial("docker - removeTestContainers leaves no corral.test=1 container or network but those of running test files", async (t) => {
  await ensureDockerForTests();
  const network = await createTestNetwork(`corral-test-${randomUUID().slice(0, 8)}`);
  await startSshHost({ network: network.name, noSshd: true, name: `corral-test-${randomUUID().slice(0, 8)}` });

  await removeTestContainers();
  for (const kind of ["ps -a", "network ls"] as const) {
    const left = (await labelled(kind)).filter((c) => c.pid === process.pid || !isAlive(c.pid));
    t.deepEqual(left, [], `docker ${kind}`);
  }
});
