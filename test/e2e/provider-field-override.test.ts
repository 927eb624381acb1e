/**
 * Provider fields of a request, through REST to the provisioner: a user may give the provider type's user fields
 * and its admin fields marked `override`; any other field (an admin field without `override`, a field the type
 * does not have) is a 400 naming it, and never reaches a task. What reaches the tasks is read from the task
 * messages the provider plugin of an in-process provisioner receives.
 */
import anyTest, { type TestFn } from "ava";
import { randomUUID } from "node:crypto";
import { PROVISIONER_INBOX_PREFIX, type JsonObject, type PluginField, type PluginSpec } from "@corral/contracts";
import {
  bundledPlugins,
  createSimProvider,
  SIM_SPEC,
  startProvisioner,
  type Plugin,
  type PluginContext,
  type RunningProvisioner,
} from "@corral/provisioner";
import type { NatsConnection } from "@nats-io/transport-node";
import { connectNats, silentLogger } from "@corral/shared";
import { api } from "../helpers/api.js";
import { assertError, assertOk, show } from "../helpers/assertions.js";
import { createClusterCatalog, type ClusterCatalog } from "../helpers/cluster-fixture.js";
import { waitForStatus } from "../helpers/clusters.js";
import { storedMessagesContaining } from "../helpers/stored-bytes.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

const PROVIDER_TYPE = "ec2-like";
const ADMIN_FIELDS = {
  endpoint: "https://ec2.admin.example",
  region: "admin-region",
  subnet_id: "subnet-admin",
  trust_host_key_on_first_use: "false",
};

const field = (label: string, override: boolean): PluginField => ({ label, type: "text", override, tip: label });

/**
 * Sim machines under a specification shaped like an EC2 provider's: the admin sets endpoint, region, subnet and
 * the host-key setting; a user may give its key pair (a user field) and a subnet (an admin field marked override).
 */
const EC2_LIKE_SPEC: PluginSpec = {
  ...SIM_SPEC,
  name: PROVIDER_TYPE,
  parameters: {
    admin: {
      fields: {
        endpoint: field("Endpoint", false),
        region: field("Region", false),
        subnet_id: field("Subnet", true),
        trust_host_key_on_first_use: field("Trust host key on first use", false),
      },
      required: [["region"]],
    },
    user: { fields: { key_name: field("Your key pair", false) }, required: [] },
  },
};

/** One provider call as the plugin received it. */
interface Received {
  clusterId: string;
  taskName: string;
  provisioner: JsonObject;
}

interface Context {
  sys: TestSystem;
  nc: NatsConnection;
  provisioner: RunningProvisioner;
  received: Received[];
  catalog: ClusterCatalog;
}
const test = anyTest as TestFn<Context>;

/** `plugin` with every task message it receives recorded. */
function recording(plugin: Plugin, received: Received[]): Plugin {
  if (plugin.kind !== "providertypes") return plugin;
  const record = (ctx: PluginContext) =>
    received.push({ clusterId: ctx.task.clusterId, taskName: ctx.task.taskName, provisioner: ctx.task.config.provider.provisioner });
  return {
    kind: plugin.kind,
    spec: plugin.spec,
    create: (ctx) => (record(ctx), plugin.create(ctx)),
    confirm: (ctx) => (record(ctx), plugin.confirm(ctx)),
    delete: (ctx) => (record(ctx), plugin.delete(ctx)),
  };
}

test.before(async (t) => {
  const sys = await startSystem({ clusters: 1, provisioners: 0 });
  t.context.sys = sys;
  t.context.received = [];
  const nc = (t.context.nc = await connectNats({ url: sys.provisionerNatsUrl, name: "override-provisioner", inboxPrefix: PROVISIONER_INBOX_PREFIX }));
  t.context.provisioner = await startProvisioner({
    nc,
    log: silentLogger,
    id: "override-p0",
    capacity: 8,
    workDir: sys.workDir,
    plugins: [...bundledPlugins(), createSimProvider({ spec: EC2_LIKE_SPEC })].map((p) => recording(p, t.context.received)),
  });
  t.context.catalog = await createClusterCatalog(sys.baseUrl, {
    workers: 2,
    providerType: PROVIDER_TYPE,
    sim: ADMIN_FIELDS,
    services: [{ name: "base", actions: { install: "true" } }],
  });
});

test.after.always(async (t) => {
  await t.context.provisioner?.stop();
  await t.context.nc?.drain().catch(() => {});
  await t.context.sys?.stop();
});

const receivedBy = (t: { context: Context }, clusterId: string, taskName: string) =>
  t.context.received.filter((r) => r.clusterId === clusterId && r.taskName === taskName);

test.serial("a user field and an admin field marked override reach every task; the admin's other fields stay", async (t) => {
  const { sys, catalog } = t.context;
  const alice = { ...catalog.admin, user: "alice" };
  const res = await api(sys.baseUrl, "POST", "/clusters", {
    ...alice,
    body: { name: "mine", clusterTemplate: catalog.template, numMachines: 2, providerFields: { key_name: "alice-key", subnet_id: "subnet-alice" } },
  });
  assertOk(t, res, "create with a user field and an overridable one");
  const id = res.body.id as string;
  await waitForStatus(sys.baseUrl, alice, id, "active");
  const expected = { ...ADMIN_FIELDS, subnet_id: "subnet-alice", key_name: "alice-key" };
  for (const taskName of ["CREATE", "CONFIRM"]) {
    const tasks = receivedBy(t, id, taskName);
    t.is(tasks.length, 2, `${taskName} of both nodes`);
    for (const task of tasks) t.deepEqual(task.provisioner, expected, taskName);
  }

  // A later job brings its own fields, checked the same way: refused, the delete starts nothing.
  const evil = `https://evil-${randomUUID()}.example`;
  const refused = await api(sys.baseUrl, "DELETE", `/clusters/${id}`, { ...alice, body: { providerFields: { endpoint: evil } } });
  assertError(t, refused, 400, "delete overriding the endpoint");
  t.is(refused.body.error, "provider_field_not_allowed");
  t.deepEqual(refused.body.details?.fields, ["endpoint"]);
  t.is((await api(sys.baseUrl, "GET", `/clusters/${id}/status`, alice)).body.status, "active", "the refused delete started nothing");
  const accepted = await api(sys.baseUrl, "DELETE", `/clusters/${id}`, { ...alice, body: { providerFields: { key_name: "alice-key-2" } } });
  assertOk(t, accepted, "delete with a user field");
  await waitForStatus(sys.baseUrl, alice, id, "terminated");
  const deletes = receivedBy(t, id, "DELETE");
  t.is(deletes.length, 2);
  for (const task of deletes) t.deepEqual(task.provisioner, { ...ADMIN_FIELDS, key_name: "alice-key-2" }, "the delete's own fields only");
  t.false(t.context.received.some((r) => JSON.stringify(r.provisioner).includes(evil)), "no task carried the refused value");
});

test.serial("admin fields without override, and fields the type lacks, are a 400 naming them; nothing of the request reaches a task", async (t) => {
  const { sys, catalog } = t.context;
  const evil = `https://evil-${randomUUID()}.example`;
  const before = t.context.received.length;
  const body = {
    name: "evil",
    clusterTemplate: catalog.template,
    numMachines: 1,
    providerFields: { key_name: "k", endpoint: evil, region: "us-evil-1", trust_host_key_on_first_use: "true", no_such_field: "x" },
  };
  for (const dryRun of [false, true]) {
    const res = await api(sys.baseUrl, "POST", `/clusters${dryRun ? "?dryRun=true" : ""}`, { ...catalog.admin, user: "mallory", body });
    assertError(t, res, 400, `create overriding admin fields${dryRun ? " (dry run)" : ""}`);
    t.regex(res.headers.get("content-type") ?? "", /^application\/json/);
    t.like(res.body, { status: 400, error: "provider_field_not_allowed" }, show(res));
    t.deepEqual(res.body.details, {
      field: "providerFields",
      fields: ["endpoint", "no_such_field", "region", "trust_host_key_on_first_use"],
      allowedFields: ["key_name", "subnet_id"],
    });
    t.regex(res.body.message, /endpoint, no_such_field, region, trust_host_key_on_first_use/);
  }
  t.deepEqual((await api(sys.baseUrl, "GET", "/clusters", { ...catalog.admin, user: "mallory" })).body, [], "no cluster");
  t.is(t.context.received.length, before, "no task reached the provisioner");
  t.deepEqual(await storedMessagesContaining(sys.nc, evil), [], "nothing stored holds the refused value");
});
