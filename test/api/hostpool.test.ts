/**
 * The hosts of a `hostpool` provider through the REST API: every listed host with its allocation, allocations of
 * hosts no longer listed, releasing a quarantined host; tenant admin only. Allocations are written into KV as the
 * provisioners would.
 */
import { buckets, encode, type HostAllocation } from "@corral/contracts";
import { hostAllocationKey, openBucket } from "@corral/shared";
import { HOSTPOOL_SPEC } from "@corral/provisioner";
import { api, type Caller } from "../helpers/api.js";
import { assertError, assertOk } from "../helpers/assertions.js";
import { createTenant, uniqueName, type TestTenant } from "../helpers/catalog.js";
import { registerPluginTypes } from "../helpers/registry.js";
import type { TestSystem } from "../helpers/system.js";
import { testWithSystem } from "../helpers/system-test.js";

const test = testWithSystem();

type T = { context: { sys: TestSystem } };

/** The plugin types, as a provisioner carrying them would announce them (once, before the first provider). */
let registered: Promise<void> | undefined;
const registerTypes = (t: T) => (registered ??= registerPluginTypes(t.context.sys.nc, "providertypes", [HOSTPOOL_SPEC, { name: "other-cloud" }]));
const call = (t: T, caller: Caller, method: string, path: string, body?: unknown) =>
  api(t.context.sys.baseUrl, method, path, { ...caller, body });

async function hostpoolProvider(t: T, tenant: TestTenant, hosts: string, providertype = "hostpool"): Promise<string> {
  await registerTypes(t);
  const name = uniqueName("pool");
  const res = await call(t, tenant.admin, "POST", "/providers", { name, providertype, provisioner: { hosts, ssh_password: "pw" } });
  if (res.status !== 200) throw new Error(`creating provider ${name}: HTTP ${res.status} ${res.text}`);
  return name;
}

async function allocate(t: T, tenant: string, provider: string, allocation: HostAllocation): Promise<void> {
  const kv = await openBucket(t.context.sys.nc, buckets.hostPool);
  await kv.put(hostAllocationKey(tenant, provider, allocation.host), encode(allocation));
}

test("hosts - every listed host in order with its state, then allocations of hosts no longer listed", async (t) => {
  const tenant = await createTenant(t.context.sys.baseUrl, "hp");
  const provider = await hostpoolProvider(t, tenant, "10.0.0.1, ops@10.0.0.2:2222, [fd00::3]");
  await allocate(t, tenant.name, provider, { host: "10.0.0.2:2222", state: "allocated", clusterId: "00000001", nodeId: "n1", since: 1000 });
  await allocate(t, tenant.name, provider, {
    host: "[fd00::3]:22",
    state: "quarantined",
    clusterId: "00000001",
    nodeId: "n2",
    since: 2000,
    reason: "cleanup exited with 3",
  });
  await allocate(t, tenant.name, provider, { host: "10.0.0.9:22", state: "allocated", clusterId: "00000002", nodeId: "n9", since: 3000 });
  // Another provider's and another tenant's allocations are not shown.
  await allocate(t, tenant.name, "elsewhere", { host: "10.0.0.1:22", state: "allocated", clusterId: "1", nodeId: "x", since: 1 });
  await allocate(t, "other-tenant", provider, { host: "10.0.0.1:22", state: "allocated", clusterId: "1", nodeId: "y", since: 1 });

  const res = await call(t, tenant.admin, "GET", `/providers/${provider}/hosts`);
  assertOk(t, res, "list");
  t.deepEqual(res.body, [
    { host: "10.0.0.1:22", state: "free" },
    { host: "10.0.0.2:2222", state: "allocated", clusterId: "00000001", nodeId: "n1", since: 1000 },
    { host: "[fd00::3]:22", state: "quarantined", clusterId: "00000001", nodeId: "n2", since: 2000, reason: "cleanup exited with 3" },
    { host: "10.0.0.9:22", state: "allocated", clusterId: "00000002", nodeId: "n9", since: 3000 },
  ]);
});

test("hosts - releasing a quarantined host frees it; anything else is a 404", async (t) => {
  const tenant = await createTenant(t.context.sys.baseUrl, "hp");
  const provider = await hostpoolProvider(t, tenant, "10.0.1.1, 10.0.1.2, [fd00::1]:2200");
  const base = { clusterId: "00000001", since: 1000 };
  await allocate(t, tenant.name, provider, { ...base, host: "10.0.1.1:22", state: "quarantined", nodeId: "n1", reason: "r" });
  await allocate(t, tenant.name, provider, { ...base, host: "10.0.1.2:22", state: "allocated", nodeId: "n2" });
  await allocate(t, tenant.name, provider, { ...base, host: "[fd00::1]:2200", state: "quarantined", nodeId: "n3", reason: "r" });
  const release = (host: string) => call(t, tenant.admin, "DELETE", `/providers/${provider}/hosts/${host}/quarantine`);

  assertError(t, await release("10.0.1.2:22"), 404, "an allocated host");
  assertError(t, await release("10.0.1.7:22"), 404, "an unknown host");
  assertError(t, await release("not a host"), 404, "not a host");
  const released = await release("10.0.1.1:22");
  assertOk(t, released, "release");
  t.is(released.text, "");
  assertError(t, await release("10.0.1.1:22"), 404, "released twice");
  // IPv6 in brackets, percent-encoded in the path.
  assertOk(t, await release(encodeURIComponent("[fd00::1]:2200")), "release an IPv6 host");

  const states = ((await call(t, tenant.admin, "GET", `/providers/${provider}/hosts`)).body as Array<{ host: string; state: string }>).map(
    (h) => `${h.host} ${h.state}`,
  );
  t.deepEqual(states, ["10.0.1.1:22 free", "10.0.1.2:22 allocated", "[fd00::1]:2200 free"]);
});

test("hosts - a host given without its default port is found", async (t) => {
  const tenant = await createTenant(t.context.sys.baseUrl, "hp");
  const provider = await hostpoolProvider(t, tenant, "10.0.2.1");
  await allocate(t, tenant.name, provider, { host: "10.0.2.1:22", state: "quarantined", clusterId: "1", nodeId: "n", since: 1, reason: "r" });
  assertOk(t, await call(t, tenant.admin, "DELETE", `/providers/${provider}/hosts/10.0.2.1/quarantine`), "release");
});

test("hosts - tenant admin only; 404 for a missing provider or one of another type", async (t) => {
  const tenant = await createTenant(t.context.sys.baseUrl, "hp");
  const provider = await hostpoolProvider(t, tenant, "10.0.3.1");
  const other = await hostpoolProvider(t, tenant, "10.0.3.1", "other-cloud");
  assertError(t, await call(t, tenant.user, "GET", `/providers/${provider}/hosts`), 401, "a user lists");
  assertError(t, await call(t, tenant.user, "DELETE", `/providers/${provider}/hosts/10.0.3.1:22/quarantine`), 401, "a user releases");
  assertError(t, await call(t, tenant.admin, "GET", "/providers/missing/hosts"), 404, "missing provider");
  assertError(t, await call(t, tenant.admin, "GET", `/providers/${other}/hosts`), 404, "another type");
  assertError(t, await call(t, tenant.admin, "DELETE", `/providers/${other}/hosts/10.0.3.1:22/quarantine`), 404, "another type");
  const elsewhere = await createTenant(t.context.sys.baseUrl, "hp");
  assertError(t, await call(t, elsewhere.admin, "GET", `/providers/${provider}/hosts`), 404, "another tenant's provider");
  assertError(t, await call(t, tenant.admin, "POST", `/providers/${provider}/hosts`), 405, "wrong method");
});

test("hosts - an unreadable hosts field is a 409 naming the entry", async (t) => {
  const tenant = await createTenant(t.context.sys.baseUrl, "hp");
  const provider = await hostpoolProvider(t, tenant, "10.0.4.1, 10.0.4.2:99999");
  const res = await call(t, tenant.admin, "GET", `/providers/${provider}/hosts`);
  assertError(t, res, 409, "bad hosts");
  t.regex((res.body as { message: string }).message, /hosts entry "10.0.4.2:99999" has an invalid port/);
});
