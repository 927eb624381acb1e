/**
 * Secret provider fields (issue 10): fields a provider type's specification marks sensitive or of type password
 * are shown to the tenant admin only: an ordinary user sees "********" in providers, export, cluster details and
 * wherever their values appear in task output. A redacted value written back keeps the stored one. Provider
 * fields given with a request live only as long as their plan: afterwards nothing stored in JetStream holds them.
 */
import { buckets, encode, REDACTED } from "@corral/contracts";
import { listKeys, openBucket } from "@corral/shared";
import { api, type Caller } from "../helpers/api.js";
import { assertError, assertOk, show } from "../helpers/assertions.js";
import { createCluster, getOk, tenantWithSimCatalog, waitForStatus, type E2eTenant } from "../helpers/clusters.js";
import { eventually } from "../helpers/eventually.js";
import { storedMessagesContaining } from "../helpers/stored-bytes.js";
import { testWithSystem, type SystemTest } from "../helpers/system-test.js";

const test = testWithSystem({ clusters: 1, provisioners: 1, reconcileIntervalMs: 500, simSecured: true });
type T = SystemTest;

/** `sim-secured` with the admin's password in the catalog. */
const WITH_PASSWORD = "aws-eu-west-1";
/** `sim-secured` without one: users give `sim_password` with their requests. */
const NO_PASSWORD = "openstack-lab";
/** `hostpool`, whose `ssh_password` is a sensitive admin field (never used here: no cluster runs on it). */
const POOL = "pool";
const ADMIN_SECRET = "admin-Secret-4711";
const POOL_SECRET = "pool-Secret-0815";

/** base's CONFIGURE fails when the config says LEAK, printing the provider's password from its task file. */
const LEAKING_CONFIGURE = `if grep -q LEAK "$CORRAL_TASK_FILE"; then grep -o '"sim_password":"[^"]*"' "$CORRAL_TASK_FILE" >&2; exit 1; fi`;

const tenantWithSecrets = (t: T, prefix: string): Promise<E2eTenant> =>
  tenantWithSimCatalog(t.context.sys, prefix, {
    catalog: {
      providerTypes: { [WITH_PASSWORD]: "sim-secured", [NO_PASSWORD]: "sim-secured" },
      providerOverrides: { [WITH_PASSWORD]: { sim_password: ADMIN_SECRET }, [NO_PASSWORD]: {} },
      extraProviders: [{ name: POOL, providertype: "hostpool", provisioner: { hosts: "127.0.0.1:1", ssh_password: POOL_SECRET } }],
      scripts: { base: { configure: { script: LEAKING_CONFIGURE } } },
    },
  });

const get = <B = any>(t: T, caller: Caller, path: string): Promise<B> => getOk<B>(t.context.sys.baseUrl, caller, path);
const text = async (t: T, caller: Caller, path: string): Promise<string> => {
  const res = await api(t.context.sys.baseUrl, "GET", path, caller);
  if (res.status !== 200) throw new Error(`GET ${path}: ${show(res)}`);
  return res.text;
};
const providerIn = (list: any[], name: string) => list.find((p) => p.name === name);
/** Every stderr of the cluster's node actions, joined. */
const actionOutput = (details: any): string => details.nodes.flatMap((n: any) => n.actions.map((a: any) => `${a.stdout ?? ""}${a.stderr ?? ""}`)).join("\n");

test("secret provider fields: an ordinary user never sees them (providers, export, cluster details, task output); the tenant admin does", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithSecrets(t, "secrets");
  const { admin, user } = tenant;

  // Providers, one and all.
  t.is((await get(t, user, `/providers/${WITH_PASSWORD}`)).provisioner.sim_password, REDACTED);
  t.is((await get(t, admin, `/providers/${WITH_PASSWORD}`)).provisioner.sim_password, ADMIN_SECRET);
  t.deepEqual((await get(t, user, `/providers/${POOL}`)).provisioner, { hosts: "127.0.0.1:1", ssh_password: REDACTED }, "non-secret fields stay");
  t.is((await get(t, admin, `/providers/${POOL}`)).provisioner.ssh_password, POOL_SECRET);
  const userList = await get<any[]>(t, user, "/providers");
  t.is(providerIn(userList, WITH_PASSWORD).provisioner.sim_password, REDACTED);
  t.is(providerIn(userList, POOL).provisioner.ssh_password, REDACTED);
  t.is(providerIn(await get<any[]>(t, admin, "/providers"), WITH_PASSWORD).provisioner.sim_password, ADMIN_SECRET);
  for (const path of ["/providers", `/providers/${WITH_PASSWORD}`, `/providers/${POOL}`, "/export"]) {
    const seen = await text(t, user, path);
    t.false(seen.includes(ADMIN_SECRET) || seen.includes(POOL_SECRET), `the user's ${path} shows no secret`);
  }
  // Export.
  const userExport = await get(t, user, "/export");
  t.is(providerIn(userExport.providers, WITH_PASSWORD).provisioner.sim_password, REDACTED);
  t.is(providerIn(userExport.providers, POOL).provisioner.ssh_password, REDACTED);
  const adminExport = await get(t, admin, "/export");
  t.is(providerIn(adminExport.providers, WITH_PASSWORD).provisioner.sim_password, ADMIN_SECRET);
  t.is(providerIn(adminExport.providers, POOL).provisioner.ssh_password, POOL_SECRET);

  // Cluster details and task output: the user's cluster on the provider with the admin's password, whose
  // CONFIGURE prints that password and fails.
  const id = await createCluster(baseUrl, user, { name: "leaky", clusterTemplate: "webapp", numMachines: 1, provider: WITH_PASSWORD, config: { x: "LEAK" } });
  await waitForStatus(baseUrl, user, id, "incomplete");
  const seenByUser = await get(t, user, `/clusters/${id}`);
  const seenByAdmin = await get(t, admin, `/clusters/${id}`);
  t.is(seenByUser.provider.provisioner.sim_password, REDACTED);
  t.is(seenByAdmin.provider.provisioner.sim_password, ADMIN_SECRET);
  t.true(actionOutput(seenByUser).includes(`"sim_password":"${REDACTED}"`), `the user sees the output, redacted: ${actionOutput(seenByUser)}`);
  t.true(actionOutput(seenByAdmin).includes(`"sim_password":"${ADMIN_SECRET}"`), "the admin sees the output as written");
  const plans = await get<any[]>(t, user, `/clusters/${id}/plans`);
  for (const path of [`/clusters/${id}`, `/clusters/${id}/plans`, `/clusters/${id}/plans/${plans[0].id}`, `/clusters/${id}/status`, `/clusters/${id}/config`, "/clusters"]) {
    t.false((await text(t, user, path)).includes(ADMIN_SECRET), `the user's ${path} shows no secret`);
  }
  const properties = await api(baseUrl, "POST", "/getNodeProperties", { ...user, body: { clusterId: id } });
  assertOk(t, properties, "node properties");
  t.false(properties.text.includes(ADMIN_SECRET), "node properties show no secret");
});

test("a redacted value written back keeps the stored secret (PUT, import); as a new value it is a 400", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithSecrets(t, "marker");
  const { admin, user } = tenant;
  const asSeen = await get(t, user, `/providers/${WITH_PASSWORD}`);
  t.is(asSeen.provisioner.sim_password, REDACTED);

  // PUT of the redacted provider, one other field changed: the password stays.
  const put = await api(baseUrl, "PUT", `/providers/${WITH_PASSWORD}`, {
    ...admin,
    body: { ...asSeen, provisioner: { ...asSeen.provisioner, delay_ms: "1" } },
  });
  assertOk(t, put, "PUT with the marker");
  t.is(put.body.provisioner.sim_password, ADMIN_SECRET, "the answer shows the kept value");
  t.deepEqual((await get(t, admin, `/providers/${WITH_PASSWORD}`)).provisioner, { sim_password: ADMIN_SECRET, delay_ms: "1" });
  // A new value replaces it.
  assertOk(t, await api(baseUrl, "PUT", `/providers/${WITH_PASSWORD}`, { ...admin, body: { ...asSeen, provisioner: { sim_password: "new-pw" } } }), "PUT of a new value");
  t.is((await get(t, admin, `/providers/${WITH_PASSWORD}`)).provisioner.sim_password, "new-pw");

  // The user's (redacted) export imported back by the admin: every secret stays as stored.
  const before = await get(t, admin, "/export");
  assertOk(t, await api(baseUrl, "POST", "/import", { ...admin, body: await get(t, user, "/export") }), "import of the redacted export");
  t.deepEqual(await get(t, admin, "/export"), before, "the import changed nothing");

  // Where nothing is stored, the marker is not a value.
  const created = await api(baseUrl, "POST", "/providers", {
    ...admin,
    body: { name: "fresh", providertype: "sim-secured", provisioner: { sim_password: REDACTED } },
  });
  assertError(t, created, 400, "create with the marker");
  t.is(created.body.details?.field, "provisioner.sim_password");
  const imported = await api(baseUrl, "POST", "/import", {
    ...admin,
    body: { ...before, providers: [...before.providers, { name: "fresh", providertype: "sim-secured", provisioner: { sim_password: REDACTED } }] },
  });
  assertError(t, imported, 400, "import of a new provider with the marker");
  t.is(imported.body.details?.field, `providers[${before.providers.length}].provisioner.sim_password`);
  t.deepEqual(await get(t, admin, "/export"), before, "the refused import changed nothing");
  // A field the provider type's specification does not call secret takes the text as it is.
  assertOk(t, await api(baseUrl, "POST", "/providers", { ...admin, body: { name: "plain", providertype: "sim", provisioner: { note: REDACTED } } }), "marker in a plain field");
  t.is((await get(t, user, "/providers/plain")).provisioner.note, REDACTED);
});

test("provider fields given with a request live only as long as their plan: nothing stored keeps them afterwards, not even in output", async (t) => {
  const { baseUrl, nc } = t.context.sys;
  const tenant = await tenantWithSecrets(t, "transient");
  const { admin, user } = tenant;
  const secret = "request-Secret-2342";
  // Its CONFIGURE prints the password it was given, then fails.
  const id = await createCluster(baseUrl, user, {
    name: "given",
    clusterTemplate: "webapp",
    numMachines: 1,
    provider: NO_PASSWORD,
    config: { x: "LEAK" },
    providerFields: { sim_password: secret },
  });
  await waitForStatus(baseUrl, user, id, "incomplete");
  for (const caller of [user, admin]) {
    const output = actionOutput(await get(t, caller, `/clusters/${id}`));
    t.true(output.includes(`"sim_password":"${REDACTED}"`), `${caller.user} sees the output, the given value redacted: ${output}`);
    t.false(output.includes(secret));
  }
  const fields = await openBucket(nc, buckets.credentials);
  const keptFields = async () => (await listKeys(fields)).filter((key) => key.startsWith(id));
  t.deepEqual(await keptFields(), [], "no provider fields are kept once the plan ended");
  // Cluster, plan and node records with their kept history, the results stream, the task queue: nowhere. (A task
  // message leaves the work queue when its ack arrives, which may be a moment after its result.)
  const leftovers = () => storedMessagesContaining(nc, secret);
  await eventually(async () => (await leftovers()).length === 0, { what: "nothing stored holds the given value", timeoutMs: 10_000 }).catch(() => {});
  t.deepEqual(await leftovers(), [], "nothing stored holds the given value");

  // The next operation brings its own fields; delete runs with them and they go too.
  const refused = await api(baseUrl, "DELETE", `/clusters/${id}`, user);
  t.is(refused.status, 400, `delete without the fields: ${show(refused)}`);
  t.truthy(refused.body?.missingFields, "the missingFields body");
  assertOk(t, await api(baseUrl, "DELETE", `/clusters/${id}`, { ...user, body: { providerFields: { sim_password: secret } } }), "delete with them");
  await waitForStatus(baseUrl, user, id, "terminated");
  t.deepEqual(await keptFields(), []);
  await eventually(async () => (await leftovers()).length === 0, { what: "nothing stored holds the given value", timeoutMs: 10_000 }).catch(() => {});
  t.deepEqual(await leftovers(), []);
});

test("provider fields no running plan needs are swept: an entry left by a crash before its plan started is removed", async (t) => {
  const { nc } = t.context.sys;
  const fields = await openBucket(nc, buckets.credentials);
  // As a process killed between storing a request's fields and starting its plan leaves them (and as the older
  // layout kept them per cluster, until the cluster was terminated).
  const orphan = { clusterId: "99999999", planId: "99999999-002", fields: { sim_password: "orphan-Secret-1" }, writtenAt: 0 };
  await fields.put("99999999.99999999-002", encode(orphan));
  await fields.put("99999998", encode({ sim_password: "legacy-Secret-2" }));
  const swept = ["99999999.99999999-002", "99999998"];
  await eventually(async () => !(await listKeys(fields)).some((key) => swept.includes(key)), { what: "the orphaned entries removed", timeoutMs: 10_000 });
  t.deepEqual(await storedMessagesContaining(nc, "orphan-Secret-1"), []);
  t.deepEqual(await storedMessagesContaining(nc, "legacy-Secret-2"), []);
});
