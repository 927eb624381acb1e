import { chmod, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { CREDENTIALS_FILE, loadOrCreateBusCredentials } from "../src/bus-credentials.js";
import { CORRAL_SERVICES } from "../src/service-access.js";

async function scratchDir(t: { teardown(fn: () => Promise<void>): void }): Promise<string> {
  const parent = await mkdtemp(join(tmpdir(), "corral-credentials-"));
  t.teardown(() => rm(parent, { recursive: true, force: true }));
  return join(parent, "data");
}

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

test("bus credentials - made at the first start in a 0700 data dir, mode 0600, and the same ones later", async (t) => {
  const dataDir = await scratchDir(t);
  const first = await loadOrCreateBusCredentials(dataDir);
  t.true(first.created);
  t.is(first.path, join(dataDir, CREDENTIALS_FILE));
  t.is(await modeOf(dataDir), 0o700);
  t.is(await modeOf(first.path), 0o600);
  const { admin, services, provisioner, redisPassword } = first.credentials;
  const logins = [admin, ...CORRAL_SERVICES.map((s) => services[s]), provisioner];
  t.is(new Set(logins.map((l) => l.user)).size, CORRAL_SERVICES.length + 2, "a user each: admin, every service, provisioner");
  const secrets = [...logins.map((l) => l.password), redisPassword];
  for (const secret of secrets) t.regex(secret, /^[0-9a-f]{48}$/);
  t.is(new Set(secrets).size, secrets.length);

  const again = await loadOrCreateBusCredentials(dataDir);
  t.false(again.created);
  t.deepEqual(again.credentials, first.credentials);
});

test("bus credentials - a data dir or file opened up by hand is tightened again", async (t) => {
  const dataDir = await scratchDir(t);
  const { path } = await loadOrCreateBusCredentials(dataDir);
  await chmod(dataDir, 0o755);
  await chmod(path, 0o644);
  await loadOrCreateBusCredentials(dataDir);
  t.is(await modeOf(dataDir), 0o700);
  t.is(await modeOf(path), 0o600);
});

test("bus credentials - launchers racing on a fresh data dir end up with one set", async (t) => {
  const dataDir = await scratchDir(t);
  const all = await Promise.all(Array.from({ length: 6 }, () => loadOrCreateBusCredentials(dataDir)));
  t.is(all.filter((r) => r.created).length, 1);
  for (const r of all) t.deepEqual(r.credentials, all[0]?.credentials);
  t.deepEqual(JSON.parse(await readFile(join(dataDir, CREDENTIALS_FILE), "utf8")), all[0]?.credentials);
});

test("bus credentials - a damaged file is refused with what to do, not replaced", async (t) => {
  const dataDir = await scratchDir(t);
  await loadOrCreateBusCredentials(dataDir);
  await writeFile(join(dataDir, CREDENTIALS_FILE), "{}");
  const err = await t.throwsAsync(loadOrCreateBusCredentials(dataDir));
  t.regex(err?.message ?? "", /not a Corral credentials file.*move it away/);
});

test("bus credentials - a file with one services user keeps its logins, that user as the admin, and gains one per service", async (t) => {
  const dataDir = await scratchDir(t);
  const { credentials: made } = await loadOrCreateBusCredentials(dataDir);
  const old = { services: made.admin, provisioner: made.provisioner, redisPassword: made.redisPassword };
  await writeFile(join(dataDir, CREDENTIALS_FILE), JSON.stringify(old), { mode: 0o600 });
  const upgraded = await loadOrCreateBusCredentials(dataDir);
  t.false(upgraded.created);
  t.deepEqual(upgraded.credentials.admin, old.services);
  t.deepEqual(upgraded.credentials.provisioner, old.provisioner);
  t.is(upgraded.credentials.redisPassword, old.redisPassword);
  t.deepEqual(Object.keys(upgraded.credentials.services).sort(), [...CORRAL_SERVICES].sort());
  t.deepEqual((await loadOrCreateBusCredentials(dataDir)).credentials, upgraded.credentials, "the upgrade is written back");
  t.is(await modeOf(upgraded.path), 0o600);
});
