/**
 * Worker balancing end to end, real clock: two tenancy instances behind the REST gateway on one nats-server,
 * provisioners heartbeating into the registry as a running provisioner does. One scenario, step by step (serial):
 * placement, a provisioner's death, workers changed by PUT, a provisioner's return, tenant deletion.
 */
import anyTest, { type ExecutionContext, type TestFn } from "ava";
import {
  ASSIGNMENT_KEY,
  PROVISIONER_DEAD_AFTER_MS,
  buckets,
  kvKey,
  type WorkerAssignment,
} from "@corral/contracts";
import { openBucket, readValue } from "@corral/shared";
import { api, SUPERADMIN } from "../../../test/helpers/api.js";
import { eventually } from "../../../test/helpers/eventually.js";
import { registerProvisioner, type RegisteredProvisioner } from "../../../test/helpers/registry.js";
import { startSystem, type TestSystem } from "../../../test/helpers/system.js";

interface Context {
  sys: TestSystem;
  provisioners: Map<string, RegisteredProvisioner>;
}
const test = anyTest as TestFn<Context>;
type T = ExecutionContext<Context>;

test.before(async (t) => {
  t.context.sys = await startSystem({ tenancies: 2 });
  t.context.provisioners = new Map();
});
test.after.always(async (t) => {
  for (const p of t.context.provisioners?.values() ?? []) p.stop();
  await t.context.sys?.stop();
});

const su = (t: T, method: string, path: string, body?: unknown) =>
  api(t.context.sys.baseUrl, method, path, { ...SUPERADMIN, body });

async function assignment(t: T): Promise<{ value: WorkerAssignment; revision: number }> {
  const kv = await openBucket(t.context.sys.nc, buckets.assignments);
  return (await readValue<WorkerAssignment>(kv, ASSIGNMENT_KEY)) ?? { value: {}, revision: 0 };
}

const held = (a: WorkerAssignment, tenant: string) => Object.values(a).reduce((s, m) => s + (m[tenant] ?? 0), 0);
const used = (a: WorkerAssignment, id: string) => Object.values(a[id] ?? {}).reduce((s, n) => s + n, 0);
const cell = (a: WorkerAssignment, id: string, tenant: string) => a[id]?.[tenant] ?? 0;

async function heartbeat(t: T, id: string, capacityTotal: number) {
  t.context.provisioners.set(id, await registerProvisioner(t.context.sys.nc, { id, capacityTotal }));
}

async function setWorkers(t: T, name: string, workers: number) {
  const res = await su(t, "PUT", `/tenants/${name}`, { tenant: { name, workers } });
  t.is(res.status, 200, `PUT ${name} workers ${workers}: ${res.text}`);
}

/** Waits until the stored assignment satisfies `ok`, and returns it. */
function settle(t: T, what: string, ok: (a: WorkerAssignment) => boolean, timeoutMs = 10_000) {
  return eventually(
    async () => {
      const a = await assignment(t);
      return ok(a.value) ? a : false;
    },
    { what, timeoutMs, intervalMs: 100 },
  );
}

let previous: WorkerAssignment = {};

test.serial("balancer service - two instances converge on one assignment of the tenants' workers", async (t) => {
  await heartbeat(t, "p1", 4);
  await heartbeat(t, "p2", 4);
  await heartbeat(t, "p3", 4);
  for (const [name, workers] of [
    ["acme", 5],
    ["beta", 3],
  ] as const) {
    t.is((await su(t, "POST", "/tenants", { tenant: { name, workers } })).status, 200, `create ${name}`);
  }
  const settled = await settle(t, "acme 5 and beta 3 placed", (a) => held(a, "acme") === 5 && held(a, "beta") === 3);
  for (const id of ["p1", "p2", "p3"]) {
    t.true(used(settled.value, id) <= 4, `${id} within capacity`);
    t.true(cell(settled.value, id, "acme") >= 1, `acme spread onto ${id}`);
  }
  t.false("superadmin" in Object.assign({}, ...Object.values(settled.value)), "0 workers, no entries");

  // Both instances run a round every second; neither may keep rewriting what the other wrote.
  await new Promise((r) => setTimeout(r, 2500));
  t.is((await assignment(t)).revision, settled.revision, "no rewrite once converged");
  previous = settled.value;
});

test.serial("balancer service - a provisioner that stops heartbeating loses its workers to the others in time", async (t) => {
  const p1 = t.context.provisioners.get("p1")!;
  p1.stop();
  const silentSince = Date.now();
  // p2 and p3 have 8 slots, for 8 workers.
  const moved = await settle(
    t,
    "p1's workers moved to p2 and p3",
    (a) => !("p1" in a) && held(a, "acme") === 5 && held(a, "beta") === 3,
    PROVISIONER_DEAD_AFTER_MS + 5_000,
  );
  t.true(Date.now() - silentSince <= PROVISIONER_DEAD_AFTER_MS + 5_000);
  for (const id of ["p2", "p3"]) {
    for (const tenant of ["acme", "beta"]) {
      t.true(cell(moved.value, id, tenant) >= cell(previous, id, tenant), `${tenant} on ${id} stayed put`);
    }
  }
  const listed = (await su(t, "GET", "/provisioners")).body as Array<{ id: string; capacityFree: number }>;
  t.deepEqual(
    listed.map((p) => [p.id, p.capacityFree]),
    [
      ["p2", 0],
      ["p3", 0],
    ],
    "the dead one is not listed; the live ones are full",
  );
  previous = moved.value;
});

test.serial("balancer service - workers changed by PUT are followed; a shortage is filled when a provisioner returns", async (t) => {
  await setWorkers(t, "acme", 2);
  const lowered = await settle(t, "acme down to 2", (a) => held(a, "acme") === 2 && held(a, "beta") === 3);
  for (const id of ["p2", "p3"]) {
    t.is(cell(lowered.value, id, "beta"), cell(previous, id, "beta"), `beta on ${id} untouched`);
  }

  // 11 asked of 8 slots: acme gets what is free and is short.
  await setWorkers(t, "acme", 8);
  await settle(t, "acme up to the free capacity", (a) => held(a, "acme") === 5 && held(a, "beta") === 3);

  // p1 heartbeats again: its 4 slots take 3 of the missing acme workers.
  await heartbeat(t, "p1", 4);
  const back = await settle(t, "acme placed on the returning p1", (a) => held(a, "acme") === 8);
  t.is(cell(back.value, "p1", "acme"), 3);
  t.is(held(back.value, "beta"), 3);
});

test.serial("balancer service - a tenant is deleted only at 0 workers, and its assignment goes with its workers", async (t) => {
  const refused = await su(t, "DELETE", "/tenants/acme");
  t.is(refused.status, 409, "workers > 0 is not deletable");
  await setWorkers(t, "acme", 0);
  await settle(t, "acme out of the assignment", (a) => held(a, "acme") === 0 && held(a, "beta") === 3);
  t.is((await su(t, "DELETE", "/tenants/acme")).status, 200);
  t.is((await su(t, "GET", "/tenants/acme")).status, 404);
  const after = await assignment(t);
  t.false(
    Object.values(after.value).some((m) => "acme" in m),
    "no acme entries",
  );

  // A tenant deleted behind tenancy's back (the record gone while it had workers) loses its assignment too.
  const kv = await openBucket(t.context.sys.nc, buckets.tenants);
  await kv.delete(kvKey("beta"));
  await settle(t, "beta out of the assignment", (a) => Object.keys(a).length === 0);
  t.pass();
});

test.serial("balancer service - a provisioner dead for long has its record removed from the registry", async (t) => {
  const kv = await openBucket(t.context.sys.nc, buckets.provisioners);
  await registerProvisioner(
    t.context.sys.nc,
    { id: "ancient", capacityTotal: 4, lastHeartbeat: Date.now() - 20 * PROVISIONER_DEAD_AFTER_MS },
    { heartbeat: false },
  );
  await eventually(async () => (await kv.get(kvKey("ancient")))?.operation === "PURGE", {
    what: "the ancient record to be purged",
    timeoutMs: 5_000,
  });
  t.is((await kv.get(kvKey("p2")))?.operation, "PUT", "live records stay");
});
