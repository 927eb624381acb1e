/**
 * `corral webhooks ...`, derived from the endpoint table, through the real binary against a running Corral with a
 * webhooks service: register (the secret shown once), list, get, update, a test delivery, deliveries, delete; a
 * user is refused.
 */
import anyTest, { type TestFn } from "ava";
import { api, SUPERADMIN, type Caller } from "../../test/helpers/api.js";
import { uniqueName } from "../../test/helpers/catalog.js";
import { startSystem, type TestSystem } from "../../test/helpers/system.js";
import { bundledCorral, corralEnv, runCorral, scratchDir, shown } from "./helpers/run-corral.js";

interface Context {
  sys: TestSystem;
  scratch: Awaited<ReturnType<typeof scratchDir>>;
  admin: Caller;
  alice: Caller;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  t.context.sys = await startSystem({ webhooks: 1 });
  t.context.scratch = await scratchDir();
  const tenant = uniqueName("cliwebhooks");
  const created = await api(t.context.sys.baseUrl, "POST", "/tenants", { ...SUPERADMIN, body: { tenant: { name: tenant, workers: 0 } } });
  if (created.status !== 200) throw new Error(`tenant: ${created.status} ${created.text}`);
  Object.assign(t.context, { admin: { user: "admin", tenant }, alice: { user: "alice", tenant } });
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
  await t.context.scratch?.remove();
});

const corralAs = (t: { context: Context }, caller: Caller) => async (args: string[]) =>
  runCorral(args, { env: corralEnv(t.context.sys.baseUrl, caller, t.context.scratch.profile), script: await bundledCorral() });

test("corral webhooks: create shows the secret once; list, get, update, test, deliveries and delete", async (t) => {
  const corral = corralAs(t, t.context.admin);
  // Nothing listens on port 9: the test delivery fails, and is listed all the same.
  const created = await corral(["webhooks", "create", "--body-url", "http://127.0.0.1:9/cli", "--events", "audit,cluster.status", "-o", "json"]);
  t.is(created.code, 0, shown(created));
  const hook = JSON.parse(created.stdout) as { id: string; secret?: string; events: string[] };
  t.regex(hook.secret ?? "", /^whsec_/, "the secret is shown once, at create");
  t.deepEqual([...hook.events].sort(), ["audit", "cluster.status"]);

  const listed = await corral(["webhooks", "list", "-o", "json"]);
  t.is(listed.code, 0, shown(listed));
  const endpoints = JSON.parse(listed.stdout) as Array<{ id: string; secret?: string }>;
  t.deepEqual(endpoints.map((e) => e.id), [hook.id]);
  t.is(endpoints[0]?.secret, undefined, "never shown again");

  const updated = await corral(["webhooks", "update", hook.id, "--events", "audit", "-o", "json"]);
  t.is(updated.code, 0, shown(updated));
  t.deepEqual((JSON.parse(updated.stdout) as { events: string[] }).events, ["audit"]);
  const got = await corral(["webhooks", "get", hook.id, "-o", "json"]);
  t.deepEqual((JSON.parse(got.stdout) as { events: string[] }).events, ["audit"]);

  const tested = await corral(["webhooks", "test", hook.id]);
  t.is(tested.code, 0, shown(tested));
  const deliveries = await corral(["webhooks", "deliveries", hook.id, "-o", "json"]);
  t.is(deliveries.code, 0, shown(deliveries));
  t.true((JSON.parse(deliveries.stdout) as { deliveries: unknown[] }).deliveries.length >= 1, deliveries.stdout);

  const refused = await corralAs(t, t.context.alice)(["webhooks", "list"]);
  t.is(refused.code, 3, shown(refused));
  t.regex(refused.stderr, /HTTP 401/);

  const deleted = await corral(["webhooks", "delete", hook.id]);
  t.is(deleted.code, 0, shown(deleted));
  const gone = await corral(["webhooks", "get", hook.id]);
  t.is(gone.code, 3, shown(gone));
  t.regex(gone.stderr, /HTTP 404/);
});
