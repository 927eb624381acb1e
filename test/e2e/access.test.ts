/**
 * End to end through REST: who sees which cluster (another user's cluster is a 404 everywhere, the tenant admin
 * sees every cluster of the tenant, other tenants see nothing), missing provider fields (the exact `missingFields` body, docs/api.md),
 * and bad input on every cluster endpoint (400 JSON errors naming the problem, never a 5xx, nothing written).
 */
import { SIM_SECURED_SPEC } from "@corral/provisioner";
import { api, SUPERADMIN, type ApiResponse, type Caller } from "../helpers/api.js";
import { assertError, assertOk, show } from "../helpers/assertions.js";
import {
  createActiveCluster,
  waitForStatus,
  type E2eTenant,
  type PlanBody,
  getOk,
  tenantWithSimCatalog,
} from "../helpers/clusters.js";
import { testWithSystem, type SystemTest } from "../helpers/system-test.js";

const test = testWithSystem({ clusters: 1, provisioners: 1, reconcileIntervalMs: 500, simSecured: true });
type T = SystemTest;

/**
 * `openstack-lab` (no template used here defaults to it) is a `sim-secured` provider without `sim_password`: users
 * must give it as a provider field.
 */
const NO_PASSWORD = "openstack-lab";

const tenantWithCatalog = (t: T, prefix: string, tenant: Record<string, unknown> = {}): Promise<E2eTenant> =>
  tenantWithSimCatalog(t.context.sys, prefix, {
    tenant,
    catalog: { providerOverrides: { [NO_PASSWORD]: {} }, providerTypes: { [NO_PASSWORD]: "sim-secured" } },
  });

const get = <B = any>(t: T, caller: Caller, path: string): Promise<B> => getOk<B>(t.context.sys.baseUrl, caller, path);

/** Every cluster endpoint for one cluster id, with a request that would succeed for its owner. */
function clusterEndpoints(id: string, planId: string): Array<[string, string, unknown]> {
  return [
    ["GET", `/clusters/${id}`, undefined],
    ["GET", `/clusters/${id}/status`, undefined],
    ["GET", `/clusters/${id}/plans`, undefined],
    ["GET", `/clusters/${id}/plans/${planId}`, undefined],
    ["GET", `/clusters/${id}/config`, undefined],
    ["PUT", `/clusters/${id}/config`, { config: { a: 1 }, restart: false }],
    ["GET", `/clusters/${id}/services`, undefined],
    ["POST", `/clusters/${id}/services`, { services: ["redis"] }],
    ["POST", `/clusters/${id}/services/stop`, undefined],
    ["POST", `/clusters/${id}/services/start`, undefined],
    ["POST", `/clusters/${id}/services/restart`, undefined],
    ["POST", `/clusters/${id}/services/nginx/stop`, undefined],
    ["POST", `/clusters/${id}/services/nginx/start`, undefined],
    ["POST", `/clusters/${id}/services/nginx/restart`, undefined],
    ["POST", `/clusters/${id}`, { expireTime: Date.now() + 3_600_000 }],
    ["DELETE", `/clusters/${id}`, undefined],
    ["POST", "/getNodeProperties", { clusterId: id }],
  ];
}

const call = (t: T, caller: Caller, method: string, path: string, body: unknown): Promise<ApiResponse<any>> =>
  api(t.context.sys.baseUrl, method, path, { ...caller, ...(body !== undefined ? { body } : {}) });

test("another user's cluster is a 404 on every endpoint; the tenant admin sees and runs it; other tenants see nothing", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "access");
  const stranger = await tenantWithCatalog(t, "stranger");
  const id = await createActiveCluster(baseUrl, tenant.user, { name: "mine", clusterTemplate: "webapp", numMachines: 1 });
  const bobs = await createActiveCluster(baseUrl, tenant.other, { name: "bobs", clusterTemplate: "webapp", numMachines: 1 });
  const planId = (await get<PlanBody[]>(t, tenant.user, `/clusters/${id}/plans`))[0]?.id ?? "";
  const before = await get(t, tenant.user, `/clusters/${id}`);

  for (const [who, caller] of [
    ["another user of the tenant", tenant.other],
    ["the admin of another tenant", stranger.admin],
    ["a user of another tenant", { user: "alice", tenant: stranger.name }],
    ["the superadmin", SUPERADMIN],
  ] as const) {
    for (const [method, path, body] of clusterEndpoints(id, planId)) {
      assertError(t, await call(t, caller, method, path, body), 404, `${who}: ${method} ${path}`);
    }
    const list = await get<any[]>(t, caller, "/clusters");
    t.false(list.some((c) => c.id === id), `${who} does not list it`);
  }
  t.deepEqual(await get(t, tenant.user, `/clusters/${id}`), before, "the refused calls changed nothing");

  // Each user lists only their own clusters; the tenant admin lists every cluster of the tenant.
  t.deepEqual((await get<any[]>(t, tenant.user, "/clusters")).map((c) => c.id), [id]);
  t.deepEqual((await get<any[]>(t, tenant.other, "/clusters")).map((c) => c.id), [bobs]);
  t.deepEqual((await get<any[]>(t, tenant.admin, "/clusters")).map((c) => c.id), [bobs, id]);
  t.deepEqual((await get<any[]>(t, stranger.admin, "/clusters")).map((c) => c.id), []);

  // The tenant admin reads and operates on the user's cluster.
  for (const [method, path, body] of clusterEndpoints(id, planId).filter(([m]) => m === "GET")) {
    assertOk(t, await call(t, tenant.admin, method, path, body), `admin: ${method} ${path}`);
  }
  assertOk(t, await call(t, tenant.admin, "POST", "/getNodeProperties", { clusterId: id }), "admin: getNodeProperties");
  assertOk(t, await call(t, tenant.admin, "POST", `/clusters/${id}/services/stop`, undefined), "admin: stop services");
  await waitForStatus(baseUrl, tenant.admin, id, "active");
  assertOk(t, await call(t, tenant.admin, "DELETE", `/clusters/${id}`, undefined), "admin: delete");
  await waitForStatus(baseUrl, tenant.user, id, "terminated");
  t.is((await get(t, tenant.user, `/clusters/${id}`)).ownerId, "alice", "the owner stays the user");

  // Without identity: 401.
  for (const [method, path, body] of clusterEndpoints(bobs, planId)) {
    const res = await api(baseUrl, method, path, body !== undefined ? { body } : {});
    assertError(t, res, 401, `no identity: ${method} ${path}`);
  }
});

test("missing provider fields: create is 400 with exactly {missingFields}; given as providerFields the cluster is created", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "fields");
  const user = tenant.user;
  const field = SIM_SECURED_SPEC.parameters?.user?.fields["sim_password"];
  t.truthy(field);
  const expected = {
    missingFields: [
      {
        sim_password: {
          label: field?.label,
          override: field?.override,
          sensitive: field?.sensitive,
          tip: field?.tip,
          type: field?.type,
        },
      },
    ],
  };
  t.like(expected.missingFields[0]?.sim_password, { label: "Simulator password", type: "password", sensitive: true, override: false });

  for (const providerFields of [undefined, {}, { sim_password: "" }, { other: "x" }, null]) {
    const body: Record<string, unknown> = { name: "f1", clusterTemplate: "webapp", numMachines: 1, provider: NO_PASSWORD };
    if (providerFields !== undefined) body["providerFields"] = providerFields;
    const res = await api(baseUrl, "POST", "/clusters", { ...user, body });
    t.is(res.status, 400, `providerFields ${JSON.stringify(providerFields)}: ${show(res)}`);
    t.deepEqual(res.body, expected, `exact body for providerFields ${JSON.stringify(providerFields)}`);
    t.regex(res.headers.get("content-type") ?? "", /^application\/json/);
  }
  t.deepEqual(await get(t, tenant.admin, "/clusters"), [], "refused creates leave nothing");

  const secret = "s3cret-sim-password";
  const res = await api(baseUrl, "POST", "/clusters", {
    ...user,
    body: { name: "f2", clusterTemplate: "webapp", numMachines: 1, provider: NO_PASSWORD, providerFields: { sim_password: secret } },
  });
  assertOk(t, res, "create with providerFields");
  const id = res.body.id as string;
  await waitForStatus(baseUrl, user, id, "active");
  for (const path of [`/clusters/${id}`, `/clusters/${id}/plans`, `/clusters/${id}/config`, "/clusters"]) {
    t.false((await api(baseUrl, "GET", path, user)).text.includes(secret), `${path} does not show the provider field`);
  }
  // A plain sim provider needs none.
  await createActiveCluster(baseUrl, user, { name: "f3", clusterTemplate: "webapp", numMachines: 1 });
  // The fields of the create are gone with its plan: every later operation brings its own (docs/api.md, secret provider fields).
  for (const [method, path, body] of [
    ["POST", `/clusters/${id}/services/stop`, undefined],
    ["POST", `/clusters/${id}/services/nginx/start`, {}],
    ["POST", `/clusters/${id}/services`, { services: ["redis"] }],
    ["PUT", `/clusters/${id}/config`, { config: { a: 1 } }],
    ["DELETE", `/clusters/${id}`, undefined],
  ] as const) {
    const refused = await api(baseUrl, method, path, { ...user, ...(body !== undefined ? { body } : {}) });
    t.is(refused.status, 400, `${method} ${path} without fields: ${show(refused)}`);
    t.deepEqual(refused.body, expected, `${method} ${path}: exact missingFields body`);
  }
  t.is((await get(t, user, `/clusters/${id}/status`)).status, "active", "the refused operations started nothing");
  // Given with the request, later operations run, and the cluster can be deleted.
  assertOk(t, await api(baseUrl, "POST", `/clusters/${id}/services/stop`, { ...user, body: { providerFields: { sim_password: secret } } }), "stop with fields");
  await waitForStatus(baseUrl, user, id, "active");
  assertOk(t, await api(baseUrl, "DELETE", `/clusters/${id}`, { ...user, body: { providerFields: { sim_password: secret } } }), "delete with fields");
  await waitForStatus(baseUrl, user, id, "terminated");
});

interface BadCase {
  what: string;
  method: string;
  path: string;
  body?: unknown;
  raw?: string;
  status?: number;
  /** A regex the error message must match (the constraint it names). */
  message?: RegExp;
  /** `details.field` or `details.constraint`. */
  names?: string;
}

async function checkBad(t: T, caller: Caller, cases: BadCase[]): Promise<void> {
  for (const c of cases) {
    const res = await api(t.context.sys.baseUrl, c.method, c.path, {
      ...caller,
      ...(c.raw !== undefined ? { rawBody: c.raw, headers: { "content-type": "application/json" } } : c.body !== undefined ? { body: c.body } : {}),
    });
    const what = `${c.what} (${c.method} ${c.path})`;
    t.true(res.status < 500, `never a 5xx: ${what}: ${show(res)}`);
    assertError(t, res, c.status ?? 400, what);
    if (c.message) t.regex(String(res.body?.message), c.message, `message of ${what}`);
    if (c.names) {
      const named = [res.body?.details?.field, res.body?.details?.constraint].map(String);
      t.true(
        named.some((n) => n === c.names || n.startsWith(`${c.names}[`) || n.startsWith(`${c.names}.`)),
        `details name ${c.names}: ${what}: ${show(res)}`,
      );
    }
  }
}

test("bad input on cluster create: 400 JSON errors naming the problem, nothing created, no quota used", async (t) => {
  const { baseUrl } = t.context.sys;
  // maxClusters 1: a create that leaked a reservation would make the final good create a 409.
  const tenant = await tenantWithCatalog(t, "badcreate", { maxClusters: 1 });
  const ok = { name: "good", clusterTemplate: "webapp", numMachines: 2 };
  const create = (what: string, body: unknown, extra: Partial<BadCase> = {}): BadCase => ({ what, method: "POST", path: "/clusters", body, ...extra });
  await checkBad(t, tenant.user, [
    { what: "broken JSON", method: "POST", path: "/clusters", raw: '{"name": "x",' },
    { what: "empty body", method: "POST", path: "/clusters", raw: "" },
    create("array body", [ok]),
    create("string body", "cluster"),
    create("null body", null),
    create("empty object", {}),
    create("no name", { ...ok, name: undefined }, { names: "name" }),
    create("no clusterTemplate", { ...ok, clusterTemplate: undefined }, { names: "clusterTemplate" }),
    create("no numMachines", { ...ok, numMachines: undefined }, { names: "numMachines" }),
    create("name a number", { ...ok, name: 5 }, { names: "name" }),
    create("name breaking the NAME rule", { ...ok, name: "no spaces allowed" }, { names: "name" }),
    create("name too long", { ...ok, name: "n".repeat(256) }, { names: "name" }),
    create("numMachines text", { ...ok, numMachines: "three" }, { names: "numMachines" }),
    create("numMachines zero", { ...ok, numMachines: 0 }, { names: "numMachines" }),
    create("numMachines negative", { ...ok, numMachines: -2 }, { names: "numMachines" }),
    create("numMachines fractional", { ...ok, numMachines: 1.5 }, { names: "numMachines" }),
    create("numMachines huge", { ...ok, numMachines: 1e12 }),
    create("numMachines an array", { ...ok, numMachines: [2] }, { names: "numMachines" }),
    create("unknown template", { ...ok, clusterTemplate: "no-such-template" }, { names: "clusterTemplate", message: /no-such-template/ }),
    create("unknown provider", { ...ok, provider: "no-such-provider" }, { names: "provider", message: /no-such-provider/ }),
    create("unknown hardware type", { ...ok, hardwaretype: "no-such-hw" }, { message: /no-such-hw/ }),
    create("unknown image type", { ...ok, imagetype: "no-such-image" }, { message: /no-such-image/ }),
    create("hardware type outside the template", { ...ok, clusterTemplate: "k8s-distributed", numMachines: 3, hardwaretype: "small" }, { message: /\bsmall\b/ }),
    create("unknown service", { ...ok, services: ["base", "no-such-service"] }, { message: /no-such-service/ }),
    create("service outside the template", { ...ok, services: ["base", "kafka-broker"] }, { message: /kafka-broker/ }),
    create("services not a list", { ...ok, services: "base" }, { names: "services" }),
    create("services with a number", { ...ok, services: ["base", 7] }, { names: "services" }),
    create("a required service missing", { ...ok, services: ["base", "nginx", "node-app", "app-config"] }, { message: /node-app requires sql-database/ }),
    create("config not an object", { ...ok, config: "x" }, { names: "config" }),
    create("config an array", { ...ok, config: [1] }, { names: "config" }),
    create("config with a broken macro", { ...ok, config: { a: "%host.service.%" } }),
    create("providerFields not an object", { ...ok, providerFields: "pw" }, { names: "providerFields" }),
    create("initialLeaseDuration text", { ...ok, initialLeaseDuration: "long" }, { names: "initialLeaseDuration" }),
    create("initialLeaseDuration negative", { ...ok, initialLeaseDuration: -1 }, { names: "initialLeaseDuration" }),
    create("description a number", { ...ok, description: 5 }, { names: "description" }),
    create("dnsSuffix invalid", { ...ok, dnsSuffix: "not a suffix!" }, { names: "dnsSuffix" }),
    create("below the template's size.min", { ...ok, clusterTemplate: "k8s-distributed", numMachines: 2 }, { names: "size", message: /at least 3/ }),
    create("above the template's size.max", { ...ok, clusterTemplate: "data-platform", numMachines: 51 }, { names: "size", message: /\b50\b/ }),
    create("hardware type the provider has no flavor for", { ...ok, provider: "digitalocean", hardwaretype: "xlarge", clusterTemplate: "k8s-distributed", numMachines: 3 }, { message: /xlarge/ }),
  ]);
  t.deepEqual(await get(t, tenant.admin, "/clusters"), [], "no cluster was created");
  const id = await createActiveCluster(baseUrl, tenant.user, { ...ok, numMachines: "2" });
  t.is((await get(t, tenant.user, `/clusters/${id}`)).nodes.length, 2, "numMachines as a numeric string");
});

test("bad input on the other cluster endpoints: 400/404 JSON errors, the cluster unchanged", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "badops");
  const user = tenant.user;
  const id = await createActiveCluster(baseUrl, user, { name: "target", clusterTemplate: "webapp", numMachines: 2 });
  const other = await createActiveCluster(baseUrl, user, { name: "other", clusterTemplate: "webapp", numMachines: 1 });
  const otherPlan = (await get<PlanBody[]>(t, user, `/clusters/${other}/plans`))[0]?.id ?? "";
  const before = await get(t, user, `/clusters/${id}`);
  const c = `/clusters/${id}`;
  const cases: BadCase[] = [
    { what: "config: broken JSON", method: "PUT", path: `${c}/config`, raw: "{config:" },
    { what: "config: empty body", method: "PUT", path: `${c}/config`, raw: "" },
    { what: "config: no config", method: "PUT", path: `${c}/config`, body: { restart: false }, names: "config" },
    { what: "config: config a string", method: "PUT", path: `${c}/config`, body: { config: "x" }, names: "config" },
    { what: "config: config an array", method: "PUT", path: `${c}/config`, body: { config: [] }, names: "config" },
    { what: "config: body an array", method: "PUT", path: `${c}/config`, body: [{ config: {} }] },
    { what: "config: restart not a boolean", method: "PUT", path: `${c}/config`, body: { config: {}, restart: "perhaps" }, names: "restart" },
    { what: "config: providerFields a number", method: "PUT", path: `${c}/config`, body: { config: {}, providerFields: 5 }, names: "providerFields" },
    { what: "config: broken macro", method: "PUT", path: `${c}/config`, body: { config: { a: "%join(%" } } },
    { what: "add services: broken JSON", method: "POST", path: `${c}/services`, raw: "[" },
    { what: "add services: empty body", method: "POST", path: `${c}/services`, raw: "" },
    { what: "add services: no services", method: "POST", path: `${c}/services`, body: {}, names: "services" },
    { what: "add services: empty list", method: "POST", path: `${c}/services`, body: { services: [] }, names: "services" },
    { what: "add services: not a list", method: "POST", path: `${c}/services`, body: { services: "redis" }, names: "services" },
    { what: "add services: a number", method: "POST", path: `${c}/services`, body: { services: [3] }, names: "services" },
    { what: "add services: unknown", method: "POST", path: `${c}/services`, body: { services: ["no-such-service"] }, message: /no-such-service/ },
    { what: "add services: outside the template", method: "POST", path: `${c}/services`, body: { services: ["kube-apiserver"] }, message: /kube-apiserver/ },
    { what: "add services: already on the cluster", method: "POST", path: `${c}/services`, body: { services: ["base"] }, message: /base/ },
    { what: "stop: broken JSON", method: "POST", path: `${c}/services/stop`, raw: "{" },
    { what: "start: body an array", method: "POST", path: `${c}/services/start`, body: [1] },
    { what: "restart: providerFields a string", method: "POST", path: `${c}/services/restart`, body: { providerFields: "x" }, names: "providerFields" },
    { what: "single stop: broken JSON", method: "POST", path: `${c}/services/nginx/stop`, raw: "{]" },
    { what: "delete: broken JSON", method: "DELETE", path: c, raw: "{" },
    { what: "delete: body a string", method: "DELETE", path: c, body: "please" },
    { what: "lease: broken JSON", method: "POST", path: c, raw: "{" },
    { what: "lease: no expireTime", method: "POST", path: c, body: {}, names: "expireTime" },
    { what: "status filter: unknown status", method: "GET", path: "/clusters?status=running", names: "status" },
    { what: "node properties: broken JSON", method: "POST", path: "/getNodeProperties", raw: "{" },
    { what: "node properties: no clusterId", method: "POST", path: "/getNodeProperties", body: { properties: ["hostname"] }, names: "clusterId" },
    { what: "node properties: properties an object", method: "POST", path: "/getNodeProperties", body: { clusterId: id, properties: { a: 1 } }, names: "properties" },
  ];
  // Unknown cluster ids and plans: 404 on every endpoint.
  for (const unknown of ["99999999", "not-a-cluster", "00000000"]) {
    for (const [method, path, body] of clusterEndpoints(unknown, "1")) {
      cases.push({ what: `unknown cluster ${unknown}`, method, path, body, status: 404 });
    }
  }
  cases.push(
    { what: "unknown plan", method: "GET", path: `${c}/plans/no-such-plan`, status: 404 },
    { what: "another cluster's plan", method: "GET", path: `${c}/plans/${otherPlan}`, status: 404 },
    { what: "start of a service not on the cluster", method: "POST", path: `${c}/services/no-such-service/start`, status: 404 },
  );
  await checkBad(t, user, cases);

  const after = await get(t, user, `/clusters/${id}`);
  t.deepEqual(after, before, "the cluster is unchanged");
  t.like(await get(t, user, `${c}/status`), { status: "active", action: "cluster_create", actionstatus: "complete" });
  // Still fully usable.
  assertOk(t, await api(baseUrl, "POST", `${c}/services`, { ...user, body: { services: ["redis"] } }), "add redis");
  await waitForStatus(baseUrl, user, id, "active");
  t.true((await get<string[]>(t, user, `${c}/services`)).includes("redis"));
});
