/**
 * The SDK's helpers for cloud providers that the bundled plugins do not already exercise: host keys from public key
 * lines, CONFIRM's wait for SSH (against a real sshd), and the generic orphan sweep.
 */
import anyTest, { type TestFn } from "ava";
import { freePort } from "@corral/deploy";
import type { ClusterRecordHead } from "@corral/contracts";
import { silentLogger } from "@corral/shared";
import { awaitSsh, generateSshKeyPair, hostKeysFromPublicKeyLines, SshPool, sweepOrphans, type OrphanCandidate } from "@corral/provisioner/sdk";
import { startLocalSshd, type LocalSshd } from "../../test/helpers/sshd.js";

const test = anyTest as TestFn<{ sshd: LocalSshd; pool: SshPool }>;

test.before(async (t) => {
  t.context.sshd = await startLocalSshd();
  t.context.pool = new SshPool({ log: silentLogger });
});
test.after.always(async (t) => {
  await t.context.pool?.close();
  await t.context.sshd?.stop();
});

test("host keys - read from public key lines, known_hosts lines and cloud-init's console block", (t) => {
  const [type, blob] = generateSshKeyPair().publicKey.split(" ") as [string, string];
  const other = generateSshKeyPair().publicKey.split(" ")[1]!;
  t.deepEqual(hostKeysFromPublicKeyLines(`${type} ${blob} root@node-1\n`), { [type]: blob });
  t.deepEqual(hostKeysFromPublicKeyLines(`10.0.0.5,node-1 ${type} ${blob}`), { [type]: blob });
  const console = [
    "[   12.3] cloud-init[801]: some boot noise",
    "-----BEGIN SSH HOST KEY KEYS-----",
    `${type} ${blob} root@ip-10-0-0-5`,
    "-----END SSH HOST KEY KEYS-----",
  ].join("\r\n");
  t.deepEqual(hostKeysFromPublicKeyLines(console), { [type]: blob });
  // A blob listed under another type than its own is never pinned.
  t.is(hostKeysFromPublicKeyLines(`ssh-rsa ${other}`), undefined);
  t.is(hostKeysFromPublicKeyLines("no keys here\n"), undefined);
});

const target = (sshd: LocalSshd, port = sshd.port) => ({ host: "127.0.0.1", port, username: sshd.user, privateKey: sshd.privateKey });

test("awaitSsh - with known host keys: verified before the login, pinned as given", async (t) => {
  const { sshd, pool } = t.context;
  const ok = await awaitSsh(pool, target(sshd), AbortSignal.timeout(10_000), { timeoutMs: 5_000, knownHostKeys: sshd.hostKeys });
  t.deepEqual(ok, { ok: true, hostKeys: sshd.hostKeys, isTrustedOnFirstUse: false });
});

test("awaitSsh - a host presenting another key than the known ones fails at once", async (t) => {
  const { sshd, pool } = t.context;
  const [type, blob] = generateSshKeyPair().publicKey.split(" ") as [string, string];
  const started = Date.now();
  const out = await awaitSsh(pool, target(sshd), AbortSignal.timeout(10_000), { timeoutMs: 5_000, knownHostKeys: { [type]: blob } });
  t.false(out.ok);
  t.regex(out.ok ? "" : out.error, /host key of .+ changed/);
  t.true(Date.now() - started < 4_000, "not retried until the deadline");
});

test("awaitSsh - without known keys the presented key is learned, and says so", async (t) => {
  const { sshd, pool } = t.context;
  t.deepEqual(await awaitSsh(pool, target(sshd), AbortSignal.timeout(10_000), { timeoutMs: 5_000 }), {
    ok: true,
    hostKeys: sshd.hostKeys,
    isTrustedOnFirstUse: true,
  });
});

test("awaitSsh - a host that never answers fails at the deadline with the last refusal; a gone machine ends it", async (t) => {
  const { sshd, pool } = t.context;
  const closed = await freePort();
  const out = await awaitSsh(pool, target(sshd, closed), AbortSignal.timeout(10_000), { timeoutMs: 1_000, retryMaxMs: 200 });
  t.false(out.ok);
  t.regex(out.ok ? "" : out.error, /did not accept SSH within 1 s \(last: .*ECONNREFUSED/);
  const gone = await awaitSsh(pool, target(sshd, closed), AbortSignal.timeout(10_000), {
    timeoutMs: 5_000,
    stillThere: async () => "the instance was terminated",
  });
  t.deepEqual(gone, { ok: false, error: "the instance was terminated" });
});

test("awaitSsh - a refused login fails at once unless retrying it was asked for", async (t) => {
  const { sshd, pool } = t.context;
  const stranger = { ...target(sshd), privateKey: generateSshKeyPair().privateKey };
  const once = await awaitSsh(pool, stranger, AbortSignal.timeout(10_000), { timeoutMs: 3_000 });
  t.regex(once.ok ? "" : once.error, /refused the login/);
  const started = Date.now();
  const retried = await awaitSsh(pool, stranger, AbortSignal.timeout(10_000), { timeoutMs: 1_500, retryRefusedLogin: true, retryMaxMs: 200 });
  t.regex(retried.ok ? "" : retried.error, /did not accept SSH within 2 s \(last: .*refused the login/);
  t.true(Date.now() - started >= 1_400, "retried until the deadline");
});

test("sweepOrphans - removes what belongs to unknown, foreign or terminated clusters past the grace period", async (t) => {
  const now = 1_000_000;
  const records: Record<string, ClusterRecordHead> = {
    live: { tenant: "acme" },
    foreign: { tenant: "other" },
    ended: { tenant: "acme", status: "terminated" },
  };
  const item = (id: string, clusterId: string, ageMs: number): OrphanCandidate => ({ id, tenant: "acme", clusterId, createdAtMs: now - ageMs });
  const items = [
    item("i-live", "live", 60_000),
    item("i-foreign", "foreign", 60_000),
    item("i-ended", "ended", 60_000),
    item("i-gone-1", "gone", 60_000),
    item("i-gone-2", "gone", 60_000),
    item("i-young", "gone", 1_000),
    item("i-stuck", "stuck", 60_000),
  ];
  const removed: string[] = [];
  const cleaned: string[] = [];
  const report = await sweepOrphans({
    list: async () => items,
    remove: async (o) => {
      if (o.id === "i-stuck") throw new Error("the cloud refused");
      removed.push(o.id);
    },
    clusters: { get: async (id) => records[id] },
    graceMs: 10_000,
    log: silentLogger,
    afterCluster: async (tenant, clusterId) => void cleaned.push(`${tenant}/${clusterId}`),
    now: () => now,
  });
  t.deepEqual(removed, ["i-foreign", "i-ended", "i-gone-1", "i-gone-2"]);
  t.deepEqual(report, { checked: 7, removed });
  t.deepEqual(cleaned.sort(), ["acme/ended", "acme/foreign", "acme/gone"], "once per cluster that lost something");
});
