import anyTest, { type TestFn } from "ava";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ASSIGNMENT_KEY, buckets, encode } from "@corral/contracts";
import { openBucket } from "@corral/shared";
import { api, type RequestOptions } from "../helpers/api.js";
import { eventually } from "../helpers/eventually.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { bearer, revoke, tokenFor } from "../helpers/tokens.js";

/**
 * End to end with security on: every call carries a token from the token server (realm file), clusters are
 * created and deleted by a provisioner, and tokens decide who sees and administers what.
 */
const test = anyTest as TestFn<{ sys: TestSystem; dir: string }>;

test.before(async (t) => {
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-e2e-auth-"));
  const realmfile = join(t.context.dir, "realm.properties");
  await writeFile(realmfile, ["root: rootpw,superadmin", "ops: opspw,admin:acme", "alice: alicepw", "bob: bobpw"].join("\n"));
  t.context.sys = await startSystem({
    clusters: 1,
    provisioners: 1,
    reconcileIntervalMs: 500,
    security: { config: { "security.authentication.basic.realmfile": realmfile } },
  });
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
});

test("e2e security - users with tokens create, see and delete their clusters; roles come from the token", async (t) => {
  const { sys } = t.context;
  const tokenUrl = sys.tokenUrl!;
  const session = async (user: string, password: string, tenant: string) => {
    const token = await tokenFor(tokenUrl, user, password);
    return {
      token,
      call: (method: string, path: string, options: RequestOptions = {}) =>
        api(sys.baseUrl, method, path, { user, tenant, ...options, headers: { ...bearer(token), ...options.headers } }),
    };
  };
  const root = await session("root", "rootpw", "superadmin");
  t.is((await root.call("POST", "/tenants", { body: { tenant: { name: "acme", workers: 4 } } })).status, 200);
  const assignments = await openBucket(sys.nc, buckets.assignments);
  await assignments.put(ASSIGNMENT_KEY, encode({ "test-p0": { acme: 4 } }));

  const ops = await session("ops", "opspw", "acme");
  const shell = (script: string) => ({ type: "shell", fields: { script } });
  const entities: Array<[string, unknown]> = [
    ["/providers", { name: "sim1", providertype: "sim", provisioner: {} }],
    ["/hardwaretypes", { name: "small", providermap: { sim1: { flavor: "s1" } } }],
    ["/imagetypes", { name: "img", providermap: { sim1: { image: "i1" } } }],
    ["/services", { name: "a", provisioner: { actions: { install: shell("echo a") } } }],
    [
      "/clustertemplates",
      {
        name: "t1",
        compatibility: { services: ["a"], hardwaretypes: ["small"], imagetypes: ["img"] },
        defaults: { services: ["a"], provider: "sim1", hardwaretype: "small", imagetype: "img", config: {} },
      },
    ],
  ];
  for (const [path, body] of entities) {
    const r = await ops.call("POST", path, { body });
    t.is(r.status, 200, `${path}: ${r.text}`);
  }
  const alice = await session("alice", "alicepw", "acme");
  t.is((await alice.call("POST", "/services", { body: { name: "x", provisioner: { actions: {} } } })).status, 401, "not an admin");

  const created = await alice.call("POST", "/clusters", { body: { name: "c1", clusterTemplate: "t1", numMachines: 2 } });
  t.is(created.status, 200, created.text);
  const id = created.body.id as string;
  await eventually(
    async () => {
      const r = await alice.call("GET", `/clusters/${id}/status`);
      return r.body.status === "active" ? true : r.body.status === "pending" ? false : Promise.reject(new Error(r.text));
    },
    { what: "cluster active", timeoutMs: 30_000 },
  );
  const bob = await session("bob", "bobpw", "acme");
  t.is((await bob.call("GET", `/clusters/${id}`)).status, 404, "another user's cluster");
  t.is((await ops.call("GET", `/clusters/${id}`)).status, 200, "the tenant admin sees it");
  t.is((await bob.call("GET", `/clusters/${id}`, { user: "alice" })).status, 401, "bob's token cannot act as alice");

  // Alice logs out: her token stops working, a new one works.
  t.is((await revoke(tokenUrl, alice.token)).status, 200);
  await eventually(async () => (await alice.call("GET", `/clusters/${id}`)).status === 401, { what: "alice's token revoked" });
  const again = await session("alice", "alicepw", "acme");
  t.is((await again.call("DELETE", `/clusters/${id}`)).status, 200);
  await eventually(async () => (await again.call("GET", `/clusters/${id}/status`)).body.status === "terminated", {
    what: "cluster terminated",
    timeoutMs: 30_000,
  });
  t.pass();
});
