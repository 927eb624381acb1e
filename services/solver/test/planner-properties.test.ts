import test from "ava";
import fc from "fast-check";
import type { Service, PlannedTask, PlanRequest } from "@corral/contracts";
import { planAction, type PlanAction } from "@corral/solver";
import { ACTION_TASK_ORDER } from "@corral/solver/testing";

// ---- generators: acyclic random service graphs (with provides, uses of absent services) and placements ----

const ACTION_KEYS = ["install", "configure", "initialize", "start", "stop"] as const;
const NODE_TASKS = new Set(["CREATE", "CONFIRM", "BOOTSTRAP", "DELETE"]);
const KEY_OF: Record<string, string> = {
  INSTALL: "install", CONFIGURE: "configure", INITIALIZE: "initialize", START: "start", STOP: "stop", REMOVE: "remove",
};

interface World {
  services: Service[];
  nodes: { id: string; services: string[] }[];
  action: PlanAction;
  service?: string;
  addedServices?: string[];
  startUnplanned: boolean;
}

const worldArb: fc.Arbitrary<World> = fc
  .record({
    n: fc.integer({ min: 1, max: 7 }),
    seedActions: fc.array(fc.subarray([...ACTION_KEYS]), { minLength: 7, maxLength: 7 }),
    provides: fc.array(fc.constantFrom<string | null>(null, "p0", "p1"), { minLength: 7, maxLength: 7 }),
    deps: fc.array(
      fc.record({
        ir: fc.array(fc.nat(12), { maxLength: 3 }),
        iu: fc.array(fc.nat(12), { maxLength: 2 }),
        rr: fc.array(fc.nat(12), { maxLength: 3 }),
        ru: fc.array(fc.nat(12), { maxLength: 2 }),
      }),
      { minLength: 7, maxLength: 7 },
    ),
    placements: fc.array(fc.array(fc.nat(6), { maxLength: 5 }), { minLength: 0, maxLength: 6 }),
    action: fc.constantFrom<PlanAction>(...(Object.keys(ACTION_TASK_ORDER) as PlanAction[])),
    targetPick: fc.option(fc.nat(6), { nil: undefined }),
    addedPick: fc.array(fc.nat(6), { maxLength: 3 }),
    startUnplanned: fc.boolean(),
    lowerCase: fc.boolean(),
  })
  .map((r) => {
    const names = Array.from({ length: r.n }, (_, i) => `s${i}`);
    const providesOf = (i: number): string[] => {
      const p = r.provides[i];
      return p ? [p] : [];
    };
    // A dependency name for service i: an earlier service, a provided name whose providers are all earlier,
    // or a name that is never on any cluster.
    const depName = (i: number, pick: number): string | undefined => {
      if (pick < 7) return pick < i ? names[pick] : undefined;
      if (pick < 9) {
        const p = `p${pick - 7}`;
        const providers = names.map((_n, j) => j).filter((j) => providesOf(j).includes(p));
        return providers.length > 0 && providers.every((j) => j < i) ? p : undefined;
      }
      return `ghost${pick}`;
    };
    const services: Service[] = names.map((name, i) => {
      const d = r.deps[i] ?? { ir: [], iu: [], rr: [], ru: [] };
      const pick = (xs: number[]): string[] => [...new Set(xs.map((x) => depName(i, x)).filter((x): x is string => !!x))];
      const actions: Service["provisioner"]["actions"] = {};
      for (const key of r.seedActions[i] ?? []) actions[key] = { type: "shell", fields: {} };
      return {
        name,
        dependencies: {
          provides: providesOf(i),
          conflicts: [],
          install: { requires: pick(d.ir), uses: pick(d.iu) },
          runtime: { requires: pick(d.rr), uses: pick(d.ru) },
        },
        provisioner: { actions },
      };
    });
    const nodes = r.placements.map((p, k) => ({
      id: `node-${k}`,
      services: [...new Set(p.filter((x) => x < r.n).map((x) => names[x] as string))],
    }));
    const onCluster = [...new Set(nodes.flatMap((n) => n.services))].sort();
    const world: World = {
      services,
      nodes,
      action: (r.lowerCase ? r.action.toLowerCase() : r.action) as PlanAction,
      startUnplanned: r.startUnplanned,
    };
    const single = r.action === "START_SERVICES" || r.action === "STOP_SERVICES" || r.action === "RESTART_SERVICES";
    if (single && r.targetPick !== undefined && onCluster.length > 0) {
      world.service = onCluster[r.targetPick % onCluster.length];
    }
    if (r.action === "ADD_SERVICES") {
      world.addedServices = [...new Set(r.addedPick.filter((x) => x < onCluster.length).map((x) => onCluster[x] as string))];
    }
    return world;
  });

function requestOf(w: World): PlanRequest {
  const req: { -readonly [K in keyof PlanRequest]: PlanRequest[K] } = {
    action: w.action,
    nodes: w.nodes,
    services: w.services,
    options: { startUnplannedDependencies: w.startUnplanned },
  };
  if (w.service !== undefined) req.service = w.service;
  if (w.addedServices !== undefined) req.addedServices = w.addedServices;
  return req;
}

// ---- an independent, deliberately naive oracle ----

interface Oracle {
  tasks: Set<string>;
  edges: [string, string][];
  closure: Record<"install" | "runtime", Map<string, Set<string>>>;
}

const key = (t: { taskName: string; nodeId: string; service: string }): string => `${t.taskName}|${t.nodeId}|${t.service}`;

function oracle(w: World): Oracle {
  // The generator draws from ACTION_TASK_ORDER: the cluster-wide actions, each with one task order.
  const action = w.action.toUpperCase() as keyof typeof ACTION_TASK_ORDER;
  const defs = new Map(w.services.map((s) => [s.name, s]));
  const C = new Set(w.nodes.flatMap((n) => n.services));
  const hosts = (s: string): string[] => w.nodes.filter((n) => n.services.includes(s)).map((n) => n.id);
  const resolve = (name: string): string[] => {
    const providers = [...C].filter((s) => s !== name && defs.get(s)?.dependencies.provides.includes(name));
    if (providers.length > 0) return providers;
    return C.has(name) ? [name] : [];
  };
  const closure = { install: new Map<string, Set<string>>(), runtime: new Map<string, Set<string>>() };
  for (const kind of ["install", "runtime"] as const) {
    const direct = new Map<string, Set<string>>();
    for (const s of C) {
      const d = defs.get(s)!.dependencies[kind];
      direct.set(s, new Set([...d.requires, ...d.uses].flatMap(resolve).filter((x) => x !== s)));
    }
    for (const s of C) {
      const seen = new Set<string>();
      const stack = [...direct.get(s)!];
      while (stack.length) {
        const x = stack.pop()!;
        if (seen.has(x)) continue;
        seen.add(x);
        stack.push(...direct.get(x)!);
      }
      closure[kind].set(s, seen);
    }
  }
  let planned: Set<string>;
  let plannedNodes: string[];
  if (action === "ADD_SERVICES") {
    planned = new Set(w.addedServices ?? []);
    plannedNodes = w.nodes.filter((n) => n.services.some((s) => planned.has(s))).map((n) => n.id);
  } else {
    plannedNodes = w.nodes.map((n) => n.id);
    if (w.service === undefined) planned = C;
    else if (action === "START_SERVICES") planned = new Set([w.service, ...closure.runtime.get(w.service)!]);
    else planned = new Set([w.service, ...[...C].filter((x) => closure.runtime.get(x)!.has(w.service!))]);
  }
  const order = ACTION_TASK_ORDER[action];
  const has = (s: string, task: string): boolean => KEY_OF[task] !== undefined && KEY_OF[task]! in defs.get(s)!.provisioner.actions;
  const tasks = new Set<string>();
  const edges: [string, string][] = [];
  // chains
  for (const nodeId of plannedNodes) {
    const node = w.nodes.find((n) => n.id === nodeId)!;
    const hw = order.filter((t) => NODE_TASKS.has(t)).map((t) => key({ taskName: t, nodeId, service: "" }));
    hw.forEach((t) => tasks.add(t));
    for (let i = 1; i < hw.length; i++) edges.push([hw[i - 1]!, hw[i]!]);
    for (const s of node.services.filter((x) => planned.has(x))) {
      let prev: string | undefined;
      for (const t of order) {
        const k = NODE_TASKS.has(t) ? key({ taskName: t, nodeId, service: "" }) : has(s, t) ? key({ taskName: t, nodeId, service: s }) : undefined;
        if (!k) continue;
        tasks.add(k);
        if (prev) edges.push([prev, k]);
        prev = k;
      }
    }
  }
  // re-run START of unplanned runtime dependencies
  if (w.startUnplanned && order.includes("START")) {
    for (const x of planned) {
      // only services with a START or INITIALIZE task in this plan wait for their dependencies' START
      if (!(["START", "INITIALIZE"] as const).some((task) => order.includes(task) && has(x, task))) continue;
      for (const y of closure.runtime.get(x)!) {
        if (!planned.has(y) && has(y, "START")) for (const n of hosts(y)) tasks.add(key({ taskName: "START", nodeId: n, service: y }));
      }
    }
  }
  // every cross-service rule, unreduced: all pairs over the transitive closure
  const rules = [
    ["INSTALL", "INSTALL", "install", false],
    ["START", "START", "runtime", false],
    ["START", "INITIALIZE", "runtime", false],
    ["STOP", "STOP", "runtime", true],
  ] as const;
  const byGroup = new Map<string, string[]>();
  for (const t of tasks) {
    const [taskName, , service] = t.split("|");
    const g = `${taskName}|${service}`;
    byGroup.set(g, [...(byGroup.get(g) ?? []), t]);
  }
  for (const [from, to, kind, reversed] of rules) {
    for (const x of C) {
      for (const y of closure[kind].get(x)!) {
        for (const a of byGroup.get(`${from}|${y}`) ?? []) {
          for (const b of byGroup.get(`${to}|${x}`) ?? []) edges.push(reversed ? [b, a] : [a, b]);
        }
      }
    }
  }
  return { tasks, edges, closure };
}

function stageOf(stages: PlannedTask[][]): Map<string, number> {
  const m = new Map<string, number>();
  stages.forEach((stage, i) => stage.forEach((t) => m.set(key(t), i)));
  return m;
}

// ---- properties ----

test("planner properties - plans hold exactly the expected tasks, once each", (t) => {
  fc.assert(
    fc.property(worldArb, (w) => {
      const plan = planAction(requestOf(w));
      const all = plan.stages.flat().map(key);
      const expected = oracle(w).tasks;
      return all.length === new Set(all).size && all.length === expected.size && all.every((k) => expected.has(k));
    }),
    { numRuns: 400 },
  );
  t.pass();
});

test("planner properties - no node has two tasks in a stage and no stage is empty", (t) => {
  fc.assert(
    fc.property(worldArb, (w) => {
      const plan = planAction(requestOf(w));
      return plan.stages.every((s) => s.length > 0 && new Set(s.map((x) => x.nodeId)).size === s.length);
    }),
    { numRuns: 400 },
  );
  t.pass();
});

test("planner properties - every ordering rule holds (chains, install and runtime requires/uses, provides, stop reversed)", (t) => {
  fc.assert(
    fc.property(worldArb, (w) => {
      const plan = planAction(requestOf(w));
      const stage = stageOf(plan.stages);
      for (const [a, b] of oracle(w).edges) {
        const sa = stage.get(a);
        const sb = stage.get(b);
        if (sa === undefined || sb === undefined || sa >= sb) return false;
      }
      return true;
    }),
    { numRuns: 400 },
  );
  t.pass();
});

test("planner properties - stages are the ASAP levels of the full task DAG, split per node", (t) => {
  fc.assert(
    fc.property(worldArb, (w) => {
      const o = oracle(w);
      const level = new Map<string, number>();
      const preds = new Map<string, string[]>();
      for (const [a, b] of o.edges) preds.set(b, [...(preds.get(b) ?? []), a]);
      const levelOf = (k: string): number => {
        const known = level.get(k);
        if (known !== undefined) return known;
        const l = Math.max(-1, ...(preds.get(k) ?? []).map(levelOf)) + 1;
        level.set(k, l);
        return l;
      };
      const perLevelNode = new Map<string, number>();
      for (const k of o.tasks) {
        const lk = `${levelOf(k)}|${k.split("|")[1]}`;
        perLevelNode.set(lk, (perLevelNode.get(lk) ?? 0) + 1);
      }
      const levels = Math.max(-1, ...[...o.tasks].map(levelOf)) + 1;
      let expectedStages = 0;
      for (let l = 0; l < levels; l++) {
        expectedStages += Math.max(0, ...[...perLevelNode].filter(([k]) => k.startsWith(`${l}|`)).map(([, v]) => v));
      }
      const plan = planAction(requestOf(w));
      if (plan.stages.length !== expectedStages) return false;
      // tasks of a lower level never come after tasks of a higher level
      let maxSeen = -1;
      for (const stage of plan.stages) {
        const ls = stage.map((x) => levelOf(key(x)));
        if (Math.min(...ls) < maxSeen) return false;
        maxSeen = Math.max(maxSeen, ...ls);
      }
      return true;
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test("planner properties - deterministic: same input, same plan; definition order does not matter", (t) => {
  fc.assert(
    fc.property(worldArb, (w) => {
      const a = planAction(requestOf(w));
      const b = planAction(requestOf(w));
      const c = planAction({ ...requestOf(w), services: [...w.services].reverse() });
      return JSON.stringify(a) === JSON.stringify(b) && JSON.stringify(a) === JSON.stringify(c);
    }),
    { numRuns: 200 },
  );
  t.pass();
});

test("planner properties - single-service start includes its runtime closure, stop its dependents", (t) => {
  fc.assert(
    fc.property(worldArb, (w) => {
      const action = w.action.toUpperCase();
      if (w.service === undefined || (action !== "START_SERVICES" && action !== "STOP_SERVICES")) return true;
      const o = oracle(w);
      const plan = planAction(requestOf(w));
      const services = new Set(plan.stages.flat().map((x) => x.service));
      const defs = new Map(w.services.map((s) => [s.name, s]));
      const verb = action === "START_SERVICES" ? "start" : "stop";
      const expected =
        action === "START_SERVICES"
          ? [w.service, ...o.closure.runtime.get(w.service)!]
          : [w.service, ...[...o.closure.runtime].filter(([, deps]) => deps.has(w.service!)).map(([s]) => s)];
      const withVerb = expected.filter((s) => verb in defs.get(s)!.provisioner.actions);
      return withVerb.every((s) => services.has(s)) && services.size === withVerb.length;
    }),
    { numRuns: 400 },
  );
  t.pass();
});
