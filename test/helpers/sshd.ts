/**
 * A real OpenSSH server on loopback for the SSH layer's tests: its own config, host key and authorized key in a
 * temporary directory, on a free port, run as a child process (`sshd -D`). Sessions run as the current user
 * (root in CI), so tests run only harmless commands.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { generateSshKeyPair } from "@corral/provisioner/testing";
import { freePort } from "@corral/deploy";

export interface LocalSshd {
  port: number;
  user: string;
  /** The client key sshd accepts (OpenSSH private key). */
  privateKey: string;
  /** The host key sshd presents: `{type: base64 blob}` as CONFIRM pins it. */
  hostKeys: Record<string, string>;
  /** Replaces the host key and restarts sshd on the same port (a rebuilt machine). */
  changeHostKey(): Promise<void>;
  /** Kills the per-connection sshd processes: every open connection drops (the listener stays). */
  dropConnections(): Promise<void>;
  stop(): Promise<void>;
}

export async function startLocalSshd(): Promise<LocalSshd> {
  // sshd's privilege separation directory (made by the package's service unit, which does not run here).
  await mkdir("/run/sshd", { recursive: true, mode: 0o755 });
  const dir = await mkdtemp(join(tmpdir(), "corral-sshd-"));
  await chmod(dir, 0o755);
  const port = await freePort();
  const user = userInfo().username;
  const client = generateSshKeyPair();
  await writeFile(join(dir, "authorized_keys"), client.publicKey + "\n", { mode: 0o600 });
  let child: ChildProcess | undefined;
  let hostKeys: Record<string, string> = {};

  const makeHostKey = async () => {
    const pair = generateSshKeyPair();
    await writeFile(join(dir, "host_key"), pair.privateKey, { mode: 0o600 });
    const [type, blob] = pair.publicKey.split(" ");
    hostKeys = { [type!]: blob! };
  };
  const start = async () => {
    await writeFile(
      join(dir, "sshd_config"),
      [
        `Port ${port}`,
        "ListenAddress 127.0.0.1",
        `HostKey ${join(dir, "host_key")}`,
        `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
        `PidFile ${join(dir, "sshd.pid")}`,
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PermitRootLogin prohibit-password",
        "StrictModes no",
        "UsePAM no",
        "UseDNS no",
        "MaxSessions 64",
        "MaxStartups 200:30:400",
        "",
      ].join("\n"),
    );
    child = spawn("/usr/sbin/sshd", ["-D", "-e", "-f", join(dir, "sshd_config")], { stdio: ["ignore", "ignore", "pipe"] });
    // A test process that ends without its after hooks (a timeout) must not leave the server behind.
    const running = child;
    process.once("exit", () => running.kill("SIGKILL"));
    let errors = "";
    child.stderr?.on("data", (c: Buffer) => (errors = (errors + c.toString()).slice(-4000)));
    const deadline = Date.now() + 10_000;
    while (!(await answers(port))) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`sshd did not start: ${errors}`);
      await sleep(50);
    }
  };
  const stopChild = async () => {
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child!.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  };

  await makeHostKey();
  await start();
  return {
    port,
    user,
    privateKey: client.privateKey,
    get hostKeys() {
      return hostKeys;
    },
    async changeHostKey() {
      await stopChild();
      await makeHostKey();
      await start();
    },
    async dropConnections() {
      // Per-connection sshd processes are the listener's children; killing them cuts every session.
      if (child?.pid) await new Promise((r) => execFile("pkill", ["-KILL", "-P", String(child!.pid)], r));
      await sleep(100);
    },
    async stop() {
      if (child?.pid) await new Promise((r) => execFile("pkill", ["-KILL", "-P", String(child!.pid)], r));
      await stopChild();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
