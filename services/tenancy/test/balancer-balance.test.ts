/** The pure worker balancer (balancer/balance.ts): examples, then properties over random inputs (fast-check). */
import test from "ava";
import fc from "fast-check";
import type { WorkerAssignment } from "@corral/contracts";
import { balance, sameAssignment, type BalanceInput } from "../src/balancer/balance.js";

type Prov = { id: string; capacityTotal: number };

const sum = (xs: Iterable<number>) => [...xs].reduce((a, b) => a + b, 0);
const usedBy = (a: WorkerAssignment, id: string) => sum(Object.values(a[id] ?? {}));
const heldBy = (a: WorkerAssignment, tenant: string) => sum(Object.values(a).map((m) => m[tenant] ?? 0));
const cell = (a: WorkerAssignment, id: string, tenant: string) => a[id]?.[tenant] ?? 0;
const total = (a: WorkerAssignment) => sum(Object.values(a).map((m) => sum(Object.values(m))));

/** Every (provisioner, tenant) whose count went down from `before` to `after`, and by how much. */
type Decrease = { id: string; tenant: string; by: number };
function decreases(before: WorkerAssignment, after: WorkerAssignment): Decrease[] {
  const out: Decrease[] = [];
  for (const [id, byTenant] of Object.entries(before)) {
    for (const [tenant, n] of Object.entries(byTenant)) {
      const now = cell(after, id, tenant);
      if (now < n) out.push({ id, tenant, by: n - now });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Examples

test("balance - workers spread over provisioners, the freest first, ties by id", (t) => {
  const r = balance({
    workers: { acme: 4 },
    provisioners: [
      { id: "p2", capacityTotal: 5 },
      { id: "p1", capacityTotal: 5 },
      { id: "p3", capacityTotal: 10 },
    ],
    current: {},
  });
  // p3 (most free) first, then p1 and p2 (none of acme yet; equal free, p1 by id), then p3 again (most free).
  t.deepEqual(r.assignment, { p1: { acme: 1 }, p2: { acme: 1 }, p3: { acme: 2 } });
  t.deepEqual(r.shortfall, {});
});

test("balance - tenants with 0 workers get no entries and empty maps are dropped", (t) => {
  const r = balance({
    workers: { idle: 0, gone: -3, odd: Number.NaN },
    provisioners: [{ id: "p1", capacityTotal: 4 }],
    current: { p1: { idle: 2 } },
  });
  t.deepEqual(r.assignment, {});
  t.deepEqual(r.shortfall, {});
});

test("balance - a dead provisioner's workers move to the live ones, nothing else moves", (t) => {
  const current = { p1: { acme: 2, beta: 1 }, p2: { acme: 1, beta: 1 }, p3: { acme: 1 } };
  const r = balance({
    workers: { acme: 4, beta: 2 },
    provisioners: [
      { id: "p2", capacityTotal: 4 },
      { id: "p3", capacityTotal: 4 },
    ],
    current,
  });
  t.deepEqual(decreases(current, r.assignment), [
    { id: "p1", tenant: "acme", by: 2 },
    { id: "p1", tenant: "beta", by: 1 },
  ]);
  t.is(heldBy(r.assignment, "acme"), 4);
  t.is(heldBy(r.assignment, "beta"), 2);
  t.false("p1" in r.assignment);
});

test("balance - a tenant lowered gives back from the provisioner holding the most of it", (t) => {
  const current = { p1: { acme: 1 }, p2: { acme: 3 }, p3: { acme: 2 } };
  const provisioners = ["p1", "p2", "p3"].map((id) => ({ id, capacityTotal: 5 }));
  const r = balance({ workers: { acme: 3 }, provisioners, current });
  t.deepEqual(r.assignment, { p1: { acme: 1 }, p2: { acme: 1 }, p3: { acme: 1 } });
});

test("balance - a capacity lowered sheds only that provisioner's workers, which move elsewhere", (t) => {
  const current = { p1: { acme: 3, beta: 1 }, p2: { beta: 1 } };
  const r = balance({
    workers: { acme: 3, beta: 2 },
    provisioners: [
      { id: "p1", capacityTotal: 2 },
      { id: "p2", capacityTotal: 10 },
    ],
    current,
  });
  t.deepEqual(r.assignment, { p1: { acme: 1, beta: 1 }, p2: { acme: 2, beta: 1 } });
  t.deepEqual(decreases(current, r.assignment), [{ id: "p1", tenant: "acme", by: 2 }]);
});

test("balance - a shortage is shared round-robin in tenant name order and reported", (t) => {
  const r = balance({
    workers: { c: 5, a: 5, b: 1 },
    provisioners: [{ id: "p1", capacityTotal: 5 }],
    current: {},
  });
  t.deepEqual(r.assignment, { p1: { a: 2, b: 1, c: 2 } });
  t.deepEqual(r.shortfall, { a: 3, c: 3 });
});

test("balance - no live provisioner: everything is short", (t) => {
  const r = balance({ workers: { a: 2 }, provisioners: [], current: { gone: { a: 2 } } });
  t.deepEqual(r.assignment, {});
  t.deepEqual(r.shortfall, { a: 2 });
});

test("balance - malformed current entries and capacities are ignored", (t) => {
  const current = { p1: { a: "2", b: -1, c: 1.7 }, p2: null, p3: 7 } as unknown as WorkerAssignment;
  const r = balance({
    workers: { a: 1, c: 1 },
    provisioners: [
      { id: "p1", capacityTotal: 2.9 },
      { id: "p2", capacityTotal: -4 },
      { id: "p3", capacityTotal: Number.POSITIVE_INFINITY },
    ],
    current,
  });
  t.deepEqual(r.assignment, { p1: { a: 1, c: 1 } });
});

test("balance - a tenant or provisioner named __proto__ is left out rather than written unreadable", (t) => {
  const workers = Object.fromEntries([
    ["__proto__", 2],
    ["a", 1],
  ]);
  const r = balance({
    workers,
    provisioners: [
      { id: "__proto__", capacityTotal: 5 },
      { id: "p1", capacityTotal: 5 },
    ],
    current: {},
  });
  t.deepEqual(Object.entries(r.assignment), [["p1", { a: 1 }]]);
  t.deepEqual(r.shortfall, {});
});

test("sameAssignment - ignores key order and zero counts", (t) => {
  t.true(sameAssignment({ p1: { a: 1, b: 2 }, p2: {} }, { p1: { b: 2, a: 1, c: 0 } }));
  t.false(sameAssignment({ p1: { a: 1 } }, { p1: { a: 2 } }));
  t.false(sameAssignment({ p1: { a: 1 } }, { p2: { a: 1 } }));
});

// ---------------------------------------------------------------------------------------------------------------
// Properties

const TENANTS = ["a", "b", "c", "d", "e"];
const IDS = ["p1", "p2", "p3", "p4", "p5"];

const workersArb = fc.dictionary(fc.constantFrom(...TENANTS), fc.integer({ min: 0, max: 12 }));
const provisionersArb = fc.uniqueArray(
  fc.record({ id: fc.constantFrom(...IDS), capacityTotal: fc.integer({ min: 0, max: 10 }) }),
  { selector: (p) => p.id, maxLength: IDS.length },
);
/** Any assignment, including dead provisioners ("x") and deleted tenants ("z"). */
const currentArb = fc.dictionary(
  fc.constantFrom(...IDS, "x"),
  fc.dictionary(fc.constantFrom(...TENANTS, "z"), fc.integer({ min: 0, max: 8 })),
);
const inputArb: fc.Arbitrary<BalanceInput> = fc.record({
  workers: workersArb,
  provisioners: provisionersArb,
  current: currentArb,
});
const RUNS = { numRuns: 500 };

/** The invariants every output satisfies. */
function checkInvariants(input: BalanceInput, result: ReturnType<typeof balance>): void {
  const caps = new Map(input.provisioners.map((p) => [p.id, p.capacityTotal]));
  for (const [id, byTenant] of Object.entries(result.assignment)) {
    if (!caps.has(id)) throw new Error(`dead or unknown provisioner ${id} got workers`);
    if (Object.keys(byTenant).length === 0) throw new Error(`empty map for ${id}`);
    for (const [tenant, n] of Object.entries(byTenant)) {
      if (!(Number.isInteger(n) && n > 0)) throw new Error(`bad count ${n} for ${id}/${tenant}`);
      if (!((input.workers[tenant] ?? 0) > 0)) throw new Error(`tenant ${tenant} wants none but got some`);
    }
    if (usedBy(result.assignment, id) > (caps.get(id) ?? 0)) throw new Error(`${id} over capacity`);
  }
  const demand = sum(Object.values(input.workers));
  const capacity = sum(caps.values());
  if (total(result.assignment) !== Math.min(demand, capacity)) {
    throw new Error(`assigned ${total(result.assignment)}, expected min(${demand}, ${capacity})`);
  }
  for (const [tenant, wanted] of Object.entries(input.workers)) {
    const short = wanted - heldBy(result.assignment, tenant);
    if (short < 0) throw new Error(`tenant ${tenant} over its demand`);
    if ((result.shortfall[tenant] ?? 0) !== short) throw new Error(`shortfall of ${tenant} misreported`);
  }
  if (Object.values(result.shortfall).some((n) => n <= 0)) throw new Error("zero shortfall listed");
  if (Object.keys(result.shortfall).length > 0 && total(result.assignment) !== capacity) {
    throw new Error("a shortfall while capacity is free");
  }
}

test("balance property - never over capacity, only live provisioners, assigned = min(demand, capacity)", (t) => {
  fc.assert(
    fc.property(inputArb, (input) => checkInvariants(input, balance(input))),
    RUNS,
  );
  t.pass();
});

test("balance property - a second run on its own output changes nothing", (t) => {
  fc.assert(
    fc.property(inputArb, (input) => {
      const once = balance(input);
      const twice = balance({ ...input, current: once.assignment });
      return JSON.stringify(twice) === JSON.stringify(once);
    }),
    RUNS,
  );
  t.pass();
});

test("balance property - deterministic whatever the order of keys and provisioners", (t) => {
  const reversed = <V>(o: Record<string, V>) => Object.fromEntries(Object.entries(o).reverse());
  fc.assert(
    fc.property(inputArb, fc.integer(), (input, seed) => {
      const rank = (p: Prov) => (p.id.charCodeAt(1) * seed) % 7;
      const shuffled = [...input.provisioners].sort((a, b) => rank(a) - rank(b));
      const other: BalanceInput = {
        workers: reversed(input.workers),
        provisioners: shuffled.reverse(),
        current: Object.fromEntries(Object.entries(input.current).reverse().map(([id, m]) => [id, reversed(m)])),
      };
      return JSON.stringify(balance(other)) === JSON.stringify(balance(input));
    }),
    RUNS,
  );
  t.pass();
});

test("balance property - from nothing, a shortage is shared: nobody gets more than one above a short tenant", (t) => {
  fc.assert(
    fc.property(workersArb, provisionersArb, (workers, provisioners) => {
      const r = balance({ workers, provisioners, current: {} });
      for (const short of Object.keys(r.shortfall)) {
        const got = heldBy(r.assignment, short);
        for (const other of Object.keys(workers)) {
          const theirs = heldBy(r.assignment, other);
          if (theirs > got + 1) return false;
          // One more only for a tenant served earlier in the last round, i.e. before it in name order.
          if (theirs === got + 1 && !(other < short)) return false;
        }
      }
      return true;
    }),
    RUNS,
  );
  t.pass();
});

test("balance property - added workers spread: a provisioner holds 2+ more of a tenant than another only if that one is full", (t) => {
  fc.assert(
    fc.property(workersArb, provisionersArb, (workers, provisioners) => {
      const r = balance({ workers, provisioners, current: {} });
      for (const tenant of Object.keys(workers)) {
        for (const p of provisioners) {
          for (const q of provisioners) {
            const full = usedBy(r.assignment, q.id) === q.capacityTotal;
            if (cell(r.assignment, p.id, tenant) >= cell(r.assignment, q.id, tenant) + 2 && !full) return false;
          }
        }
      }
      return true;
    }),
    RUNS,
  );
  t.pass();
});

/** One change to a balanced state: of one tenant's workers, or of one provisioner. */
type Change =
  | { kind: "workers"; tenant: string; workers: number }
  | { kind: "remove"; index: number }
  | { kind: "add"; id: string; capacityTotal: number }
  | { kind: "capacity"; index: number; capacityTotal: number };

const changeArb: fc.Arbitrary<Change> = fc.oneof(
  fc.record({
    kind: fc.constant("workers" as const),
    tenant: fc.constantFrom(...TENANTS),
    workers: fc.integer({ min: 0, max: 12 }),
  }),
  fc.record({ kind: fc.constant("remove" as const), index: fc.nat() }),
  fc.record({
    kind: fc.constant("add" as const),
    id: fc.constantFrom("q1", "q2", "p0"),
    capacityTotal: fc.integer({ min: 0, max: 10 }),
  }),
  fc.record({
    kind: fc.constant("capacity" as const),
    index: fc.nat(),
    capacityTotal: fc.integer({ min: 0, max: 10 }),
  }),
);

test("balance property - minimal movement: one change takes workers only where it must, no more than it must", (t) => {
  fc.assert(
    fc.property(inputArb, changeArb, (input, change) => {
      const before = balance(input).assignment;
      const provisioners = [...input.provisioners];
      const workers = { ...input.workers };
      // Where workers may be taken from, and how many at most.
      let allowed: (d: { id: string; tenant: string }) => boolean = () => false;
      let bound = 0;
      if (change.kind === "workers") {
        workers[change.tenant] = change.workers;
        allowed = (d) => d.tenant === change.tenant;
        bound = Math.max(0, heldBy(before, change.tenant) - change.workers);
      } else if (change.kind === "remove" || change.kind === "capacity") {
        if (provisioners.length === 0) return true;
        const i = change.index % provisioners.length;
        const p = provisioners[i]!;
        if (change.kind === "remove") {
          provisioners.splice(i, 1);
          bound = usedBy(before, p.id);
        } else {
          provisioners[i] = { id: p.id, capacityTotal: change.capacityTotal };
          bound = Math.max(0, usedBy(before, p.id) - change.capacityTotal);
        }
        allowed = (d) => d.id === p.id;
      } else {
        provisioners.push({ id: change.id, capacityTotal: change.capacityTotal });
      }
      const changed: BalanceInput = { workers, provisioners, current: before };
      const after = balance(changed);
      checkInvariants(changed, after);
      const taken = decreases(before, after.assignment);
      if (!taken.every(allowed)) return false;
      return sum(taken.map((d) => d.by)) === bound;
    }),
    { numRuns: 1000 },
  );
  t.pass();
});

test("balance property - a provisioner's death leaves a tenant some workers when others had room", (t) => {
  fc.assert(
    fc.property(workersArb, provisionersArb, fc.nat(), (workers, provisioners, pick) => {
      if (provisioners.length < 2) return true;
      const r = balance({ workers, provisioners, current: {} });
      const dead = provisioners[pick % provisioners.length]!;
      const othersHadRoom = provisioners.some((p) => p.id !== dead.id && usedBy(r.assignment, p.id) < p.capacityTotal);
      for (const tenant of Object.keys(workers)) {
        const held = heldBy(r.assignment, tenant);
        if (held >= 2 && othersHadRoom && cell(r.assignment, dead.id, tenant) === held) return false;
      }
      return true;
    }),
    RUNS,
  );
  t.pass();
});

test("balance - a large input (200 provisioners, 300 tenants) keeps the invariants", (t) => {
  const provisioners: Prov[] = Array.from({ length: 200 }, (_, i) => ({
    id: `p${String(i).padStart(3, "0")}`,
    capacityTotal: 50,
  }));
  const workers = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`t${i}`, 1 + (i % 40)]));
  const first = balance({ workers, provisioners, current: {} });
  checkInvariants({ workers, provisioners, current: {} }, first);
  const second = balance({ workers, provisioners: provisioners.slice(1), current: first.assignment });
  checkInvariants({ workers, provisioners: provisioners.slice(1), current: first.assignment }, second);
  t.pass();
});
