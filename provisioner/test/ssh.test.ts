import test from "ava";
import { silentLogger } from "@corral/shared";
import { OutputTail, runRemote, SshError, SshPool } from "@corral/provisioner/testing";
import { startLocalSshd, type LocalSshd } from "../../test/helpers/sshd.js";

const sshd = test.serial;
let server: LocalSshd;
let pool: SshPool;

test.before(async () => {
  server = await startLocalSshd();
  pool = new SshPool({ log: silentLogger, idleMs: 60_000 });
});
test.after.always(async () => {
  await pool?.close();
  await server?.stop();
});

const target = () => ({ host: "127.0.0.1", port: server.port, username: server.user, privateKey: server.privateKey, hostKeys: server.hostKeys });
const signal = () => new AbortController().signal;

async function run(script: string, timeoutMs = 10_000, abort?: AbortSignal) {
  const lease = await pool.acquire(target(), signal());
  try {
    return await runRemote(lease, { script, user: "root", timeoutMs, signal: abort ?? signal() });
  } finally {
    lease.release();
  }
}

sshd("learnHostKey returns the key the server presents, and it is what a pinned connection accepts", async (t) => {
  const presented = await pool.learnHostKey({ ...target(), hostKeys: undefined }, signal());
  t.deepEqual({ [presented.type]: presented.key }, server.hostKeys);
  const ran = await run("echo hello; echo oops >&2; exit 3");
  t.is(ran.exitCode, 3);
  t.is(ran.stdout.text(), "hello\n");
  t.is(ran.stderr.text(), "oops\n");
  t.false(ran.isConnectionLost);
});

sshd("a connection is reused by consecutive and concurrent commands", async (t) => {
  const before = pool.stats().connections;
  await Promise.all(Array.from({ length: 6 }, (_, i) => run(`echo ${i}`)));
  for (let i = 0; i < 5; i++) await run("true");
  t.true(pool.stats().connections - before <= 1, `opened ${pool.stats().connections - before}`);
});

sshd("environment and scripts arrive on stdin: nothing of them is on the command line", async (t) => {
  const ran = await run("export SECRET_VALUE='s3cr3t'\nps -eo args | grep -c s3cr3t || true\n");
  // Only the grep itself matches.
  t.is(ran.stdout.text().trim(), "1");
});

sshd("a timeout kills the whole remote process group, not only the channel", async (t) => {
  const marker = `corral-ssh-test-${process.pid}-${Date.now()}`;
  const ran = await run(`(sleep 300; echo never) & sh -c 'exec -a ${marker} sleep 300' & wait`, 1500);
  t.true(ran.isTimedOut);
  const left = await run(`pgrep -f ${marker} || true`);
  t.is(left.stdout.text().trim(), "", "the background process survived the timeout");
});

sshd("an abort kills the remote group too", async (t) => {
  const abort = new AbortController();
  const running = run("sleep 300", 60_000, abort.signal);
  setTimeout(() => abort.abort(), 500);
  const ran = await running;
  t.true(ran.isAborted);
  t.is(ran.exitCode, undefined);
});

sshd("output is streamed into a bounded tail that says how much was dropped", async (t) => {
  const ran = await run("head -c 3000000 /dev/zero | tr '\\\\0' 'x'; echo; echo END");
  t.is(ran.stdout.bytes, 3_000_000 + "\nEND\n".length);
  const text = ran.stdout.text();
  t.regex(text, /^\[corral: \d+ bytes dropped\]\n/);
  t.true(text.endsWith("END\n"));
  t.true(text.length <= 2048);
});

sshd("a dropped connection mid-command is reported as lost, never as success", async (t) => {
  const running = run("sleep 20; echo done", 60_000);
  await new Promise((r) => setTimeout(r, 700));
  await server.dropConnections();
  const ran = await running;
  t.true(ran.isConnectionLost);
  t.not(ran.exitCode, 0);
});

sshd("a wrong key is refused with an authentication error", async (t) => {
  const { default: ssh2 } = await import("ssh2");
  const other = ssh2.utils.generateKeyPairSync("ed25519");
  const err = await t.throwsAsync(pool.acquire({ ...target(), privateKey: other.private }, signal()));
  t.true(err instanceof SshError);
  t.is((err as SshError).kind, "auth");
  t.regex(err!.message, /refused the login/);
});

sshd("nothing is accepted without a pinned host key", async (t) => {
  const err = await t.throwsAsync(pool.acquire({ ...target(), hostKeys: {} }, signal()));
  t.is((err as SshError).kind, "host-key");
});

sshd("a changed host key is refused with a message naming both fingerprints", async (t) => {
  const pinned = server.hostKeys;
  await server.changeHostKey();
  const err = await t.throwsAsync(pool.acquire({ ...target(), hostKeys: pinned }, signal()));
  t.is((err as SshError).kind, "host-key");
  t.regex(err!.message, /host key of 127\.0\.0\.1:\d+ changed: it presented ssh-ed25519 SHA256:.+ but CONFIRM pinned ssh-ed25519 SHA256:/);
  // The new key works once pinned.
  const ran = await run("echo ok");
  t.is(ran.stdout.text(), "ok\n");
});

sshd("a refused port fails with a connect error", async (t) => {
  const err = await t.throwsAsync(pool.acquire({ ...target(), port: 1 }, signal()));
  t.is((err as SshError).kind, "connect");
  t.regex(err!.message, /ECONNREFUSED/);
});

test("OutputTail keeps the last bytes and counts the rest", (t) => {
  const tail = new OutputTail(10);
  for (let i = 0; i < 100; i++) tail.push(Buffer.from("0123456789"));
  t.is(tail.bytes, 1000);
  t.is(tail.text(5), "[corral: 995 bytes dropped]\n56789");
  const small = new OutputTail();
  small.push("abc");
  t.is(small.text(), "abc");
});

sshd("quick commands never lose their exit status (it can arrive with the channel's open confirmation)", async (t) => {
  const runs = await Promise.all(Array.from({ length: 40 }, () => run("echo x >&2; exit 3", 60_000)));
  t.deepEqual(
    runs.filter((r) => r.exitCode !== 3 || r.isConnectionLost).map((r) => ({ exit: r.exitCode, lost: r.isConnectionLost, timedOut: r.isTimedOut, signal: r.signal, err: r.stderr.text() })),
    [],
  );
});
