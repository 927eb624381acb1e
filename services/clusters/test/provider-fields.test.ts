/**
 * Provider fields of a request: a user may give the provider type's user fields and its admin fields marked
 * `override`, nothing else. Anything else is refused with a 400 naming it, before anything of the request is stored,
 * so it never reaches a task; what is accepted reaches every task of the request's plan.
 */
import { randomUUID } from "node:crypto";
import type { ExecutionContext } from "ava";
import { CorralError, type PluginSpec, type Tenant } from "@corral/contracts";
import { fieldsNotSettableByUser, userSettableFields } from "../src/domain/provider-fields.js";
import { testWithNats, type NatsContext } from "../../../test/helpers/nats-test.js";
import { storedMessagesContaining } from "../../../test/helpers/stored-bytes.js";
import { ADMIN_ENDPOINT, startCore, storedTaskMessages, TEST_SIM_SPEC, type Core } from "./helpers/core.js";

const test = testWithNats("clusters-provider-fields-test");
type T = ExecutionContext<NatsContext>;

const text = (override?: boolean) => ({ label: "l", type: "text", ...(override !== undefined ? { override } : {}) });

test("provider fields - a user may set the user fields and the admin fields marked override, nothing else", (t) => {
  const spec: PluginSpec = {
    name: "ec2-like",
    parameters: {
      admin: {
        fields: { endpoint: text(false), region: text(), subnet_id: text(true), trust_host_key_on_first_use: text(false) },
        required: [["region"]],
      },
      user: { fields: { key_name: text(false) }, required: [] },
    },
  };
  t.deepEqual([...userSettableFields(spec)].sort(), ["key_name", "subnet_id"]);
  t.deepEqual(fieldsNotSettableByUser(spec, { key_name: "k", subnet_id: "s" }), []);
  t.deepEqual(
    fieldsNotSettableByUser(spec, { trust_host_key_on_first_use: "true", key_name: "k", endpoint: "https://evil.example", region: "r", other: 1 }),
    ["endpoint", "other", "region", "trust_host_key_on_first_use"],
    "admin fields without override and unknown fields, sorted",
  );
  t.deepEqual(fieldsNotSettableByUser(spec, { endpoint: null }), ["endpoint"], "clearing an admin field is setting it");
  t.deepEqual(fieldsNotSettableByUser(spec, {}), []);
  // Names an object has from its prototype are no fields of a specification.
  const inherited = JSON.parse('{"constructor": "x", "__proto__": {"a": 1}, "toString": "y"}');
  t.deepEqual(fieldsNotSettableByUser(spec, inherited), ["__proto__", "constructor", "toString"]);
});

test("provider fields - a provider type without specification lets a user set none", (t) => {
  t.deepEqual([...userSettableFields(undefined)], []);
  t.deepEqual(fieldsNotSettableByUser(undefined, { token: "x" }), ["token"]);
  t.deepEqual(fieldsNotSettableByUser({ name: "bare" }, { token: "x" }), ["token"], "a specification without parameters neither");
  t.deepEqual(fieldsNotSettableByUser(undefined, {}), []);
});

async function startedCore(t: T): Promise<Core> {
  const tenant: Tenant = { name: `t${randomUUID().slice(0, 8)}`, workers: 1 };
  const core = await startCore(t.context.nc, { tenant });
  t.teardown(() => core.stop());
  return core;
}

const providerOfTasks = async (t: T, core: Core, planId: string) =>
  (await storedTaskMessages(t.context.nc, core.admin.tenant)).filter((m) => m.planId === planId).map((m) => m.config.provider.provisioner);

async function refusal(t: T, promise: Promise<unknown>): Promise<CorralError> {
  const err = await t.throwsAsync(promise);
  if (!(err instanceof CorralError)) throw new Error(`not a CorralError: ${String(err)}`);
  return err;
}

test("provider fields - a create's user field and overridable admin field reach every task; the admin's other fields stay", async (t) => {
  const core = await startedCore(t);
  const id = await core.operations.create(core.admin, {
    name: "given",
    clusterTemplate: "t1",
    numMachines: 2,
    providerFields: { token: "user-token", region: "user-region" },
  });
  const provisioners = await providerOfTasks(t, core, `${id}-001`);
  t.is(provisioners.length, 2, "the first stage's tasks");
  for (const provisioner of provisioners) t.deepEqual(provisioner, { endpoint: ADMIN_ENDPOINT, region: "user-region", token: "user-token" });
});

test("provider fields - a create naming an admin field without override is a 400 naming it; nothing is stored or published", async (t) => {
  const core = await startedCore(t);
  const evil = `https://evil-${randomUUID()}.example`;
  const err = await refusal(
    t,
    core.operations.create(core.admin, {
      name: "evil",
      clusterTemplate: "t1",
      numMachines: 1,
      providerFields: { token: "user-token", endpoint: evil, other: "x" },
    }),
  );
  t.like(err, { status: 400, code: "provider_field_not_allowed" });
  t.deepEqual(err.details, { field: "providerFields", fields: ["endpoint", "other"], allowedFields: ["region", "token"] });
  t.regex(err.message, /endpoint, other/);
  t.deepEqual((await core.deps.clusters.all()).filter((c) => c.tenant === core.admin.tenant), [], "no cluster");
  t.deepEqual(await storedTaskMessages(t.context.nc, core.admin.tenant), [], "no task");
  t.deepEqual(await storedMessagesContaining(t.context.nc, evil), [], "nothing stored holds the refused value");
  // The dry run answers the same.
  const dryRun = core.operations.dryRun.create(core.admin, { name: "evil", clusterTemplate: "t1", numMachines: 1, providerFields: { endpoint: "x" } });
  const dry = await refusal(t, dryRun);
  t.like(dry, { status: 400, code: "provider_field_not_allowed" });
});

// That a job's accepted fields reach its tasks: actors.test.ts, "a delete that succeeds".
test("provider fields - every job on a cluster checks them first: a refused one starts nothing", async (t) => {
  const core = await startedCore(t);
  const id = await core.operations.create(core.admin, { name: "jobs", clusterTemplate: "t1", numMachines: 1 });
  const evil = { endpoint: `https://evil-${randomUUID()}.example` };
  const jobs: Array<[string, () => Promise<unknown>]> = [
    ["delete", () => core.operations.delete(core.admin, id, evil)],
    ["configure", () => core.operations.configure(core.admin, id, { config: {}, restart: false, providerFields: evil })],
    ["restart", () => core.operations.runServices(core.admin, id, "restart_services", undefined, evil)],
    ["dry-run delete", () => core.operations.dryRun.delete(core.admin, id, evil)],
  ];
  for (const [what, job] of jobs) {
    const err = await refusal(t, job());
    // Provider fields are checked before the cluster's state: the create still runs, yet the answer is the 400.
    t.like(err, { status: 400, code: "provider_field_not_allowed" }, what);
    t.deepEqual(err.details?.["fields"], ["endpoint"], what);
  }
  t.deepEqual((await core.deps.clusters.get(id))?.value.jobs, [`${id}-001`], "no job started");
  t.deepEqual(await storedMessagesContaining(t.context.nc, evil.endpoint), [], "nothing stored holds the refused value");
});
