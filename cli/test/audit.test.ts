/**
 * `corral audit` through the real binary against a running Corral: a create and a refused request are listed
 * (table and json), pages go on with --after, a user is refused, and --follow prints a new entry within seconds,
 * each entry once.
 */
import anyTest, { type TestFn } from "ava";
import { spawn } from "node:child_process";
import type { ListedAuditEntry } from "@corral/contracts";
import { api, SUPERADMIN, type Caller } from "../../test/helpers/api.js";
import { uniqueName } from "../../test/helpers/catalog.js";
import { eventually } from "../../test/helpers/eventually.js";
import { startSystem, type TestSystem } from "../../test/helpers/system.js";
import { bundledCorral, corralEnv, runCorral, scratchDir, shown } from "./helpers/run-corral.js";

interface Context {
  sys: TestSystem;
  scratch: Awaited<ReturnType<typeof scratchDir>>;
  tenant: string;
  admin: Caller;
  alice: Caller;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  t.context.sys = await startSystem({ metrics: 1 });
  t.context.scratch = await scratchDir();
  const tenant = uniqueName("cliaudit");
  const created = await api(t.context.sys.baseUrl, "POST", "/tenants", { ...SUPERADMIN, body: { tenant: { name: tenant, workers: 0 } } });
  if (created.status !== 200) throw new Error(`tenant: ${created.status} ${created.text}`);
  Object.assign(t.context, { tenant, admin: { user: "admin", tenant }, alice: { user: "alice", tenant } });
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
  await t.context.scratch?.remove();
});

const envOf = (t: { context: Context }, caller: Caller) => corralEnv(t.context.sys.baseUrl, caller, t.context.scratch.profile);
const corralAs = (t: { context: Context }, caller: Caller) => async (args: string[]) =>
  runCorral(args, { env: envOf(t, caller), script: await bundledCorral() });

const createService = (t: { context: Context }, caller: Caller, name: string) =>
  api(t.context.sys.baseUrl, "POST", "/services", { ...caller, body: { name, provisioner: { actions: {} } } });

const jsonEntries = (stdout: string): ListedAuditEntry[] => (JSON.parse(stdout) as { entries: ListedAuditEntry[] }).entries;

test.serial("a create and a refused request are listed, as a table and as json; pages go on with --after", async (t) => {
  const admin = corralAs(t, t.context.admin);
  t.is((await createService(t, t.context.admin, "audited")).status, 200);
  const refused = await corralAs(t, t.context.alice)(["services", "create", "--data", '{"name":"refused","provisioner":{"actions":{}}}']);
  t.is(refused.code, 3, shown(refused));

  const listed = await eventually(
    async () => {
      const run = await admin(["audit"]);
      return run.code === 0 && /\b401$/m.test(run.stdout) && /\baudited +200$/m.test(run.stdout) ? run : false;
    },
    { what: "the create and the refusal in corral audit", timeoutMs: 15_000, intervalMs: 300 },
  );
  const [header, ...rows] = listed.stdout.trim().split("\n");
  t.regex(header ?? "", /^TIME +TENANT +USER +METHOD +ROUTE +TARGET +STATUS$/);
  const tenant = t.context.tenant;
  t.true(rows.some((r) => new RegExp(`^\\S+Z +${tenant} +admin +POST +/services +audited +200$`).test(r)), listed.stdout);
  t.true(rows.some((r) => new RegExp(`^\\S+Z +${tenant} +alice +POST +/services +- +401$`).test(r)), listed.stdout);
  const times = rows.map((r) => Date.parse(r.split(/ +/)[0] ?? ""));
  t.deepEqual([...times].sort((a, b) => b - a), times, "newest first");

  const json = await admin(["audit", "-o", "json", "--by", "alice"]);
  t.is(json.code, 0, shown(json));
  const alices = jsonEntries(json.stdout);
  t.true(alices.length > 0 && alices.every((e) => e.user === "alice"));
  t.like(alices.find((e) => e.status === 401), { tenant, method: "POST", route: "/services", action: "tenancy.catalog.services.create" });

  const first = JSON.parse((await admin(["audit", "-o", "json", "--limit", "1"])).stdout) as { entries: ListedAuditEntry[]; next?: string };
  t.is(first.entries.length, 1);
  t.truthy(first.next, "older entries are there");
  const second = jsonEntries((await admin(["audit", "-o", "json", "--limit", "1", "--after", first.next ?? ""])).stdout);
  const both = jsonEntries((await admin(["audit", "-o", "json", "--limit", "2"])).stdout);
  t.deepEqual([...first.entries, ...second].map((e) => e.id), both.map((e) => e.id), "--after goes on where --limit stopped");
  const table = await admin(["audit", "--limit", "1"]);
  t.regex(table.stdout, new RegExp(`^older entries: --after ${first.next}$`, "m"));

  const byUser = await corralAs(t, t.context.alice)(["audit"]);
  t.is(byUser.code, 3, shown(byUser));
  t.regex(byUser.stderr, /HTTP 401/);
});

test.serial("--follow prints each new entry within seconds, oldest first, none twice", async (t) => {
  const { tenant } = t.context;
  const child = spawn(process.execPath, [await bundledCorral(), "audit", "--follow", "--interval", "500", "-o", "json"], {
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", NO_COLOR: "1", ...envOf(t, t.context.admin) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
  const printed = () => stdout.split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as ListedAuditEntry);
  try {
    // The newest entries come first: the follow has started once something is printed.
    await eventually(() => printed().length > 0, { what: `corral audit --follow printed the latest entries\n${stderr}`, timeoutMs: 15_000 });
    const names = [uniqueName("follow"), uniqueName("follow"), uniqueName("follow")];
    for (const name of names) {
      const made = Date.now();
      t.is((await createService(t, t.context.admin, name)).status, 200);
      await eventually(() => printed().some((e) => e.target === name), { what: `${name} printed by --follow\n${stderr}`, timeoutMs: 8_000, intervalMs: 100 });
      t.true(Date.now() - made < 8_000);
    }
    // Several polls more: nothing comes twice.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const entries = printed();
    const ids = entries.map((e) => e.id);
    t.deepEqual(ids.filter((id, i) => ids.indexOf(id) !== i), [], "no entry printed twice");
    for (const name of names) t.is(entries.filter((e) => e.target === name).length, 1, name);
    const followed = entries.filter((e) => names.includes(e.target));
    t.deepEqual(followed.map((e) => e.target), names, "in the order they were recorded");
    t.true(entries.every((e) => e.tenant === tenant));
  } finally {
    child.kill("SIGINT");
    await exited;
  }
});
