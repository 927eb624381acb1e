/** Rolling restarts (docs/catalog.md, Plans): examples on the test catalog, then properties on random clusters. */
import test from "ava";
import fc from "fast-check";
import {
  isCorralError,
  type ClusterTemplate,
  type Plan,
  type PlannedTask,
  type PlanNode,
  type PlanRequest,
  type Service,
} from "@corral/contracts";
import { planAction, planGraph } from "@corral/solver";
import { fixtureServices, fixtureTemplate } from "../../../test/helpers/fixture-catalog.js";

const services = fixtureServices();

const compact = (plan: Plan): string[] =>
  plan.stages.map((s) => s.map((t) => `${t.taskName} ${t.nodeId}${t.service ? ` ${t.service}` : ""}`).join(" | "));

const taskKey = (t: PlannedTask): string => `${t.taskName}|${t.nodeId}|${t.service}`;
const sortedTasks = (plan: Plan): string[] => plan.stages.flat().map(taskKey).sort();

const CONTROL = ["base", "containerd", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"];
const WORKER = ["base", "containerd", "kube-proxy", "kubelet"];
/** k8s-distributed with five workers; coredns (quantities 1-2) on the first two. */
const k8s: PlanNode[] = [
  { id: "m", services: CONTROL },
  ...[1, 2, 3, 4, 5].map((i) => ({ id: `w${i}`, services: i <= 2 ? [...WORKER, "coredns"] : WORKER })),
];
const k8sTemplate = fixtureTemplate("k8s-distributed");

const WEB = ["app-config", "base", "nginx", "node-app"];
const webapp: PlanNode[] = [
  { id: "web1", services: [...WEB, "postgresql"] },
  { id: "web2", services: WEB },
  { id: "web3", services: WEB },
  { id: "web4", services: WEB },
];
const webappTemplate = fixtureTemplate("webapp");

// ---- examples ----

// kubelet (quantities.min 2, on 5 workers) may lose 2 nodes at a time; coredns (min 1, on w1 and w2) only one, so
// w1 and w2 go in different batches. Within each batch: dependents stopped first, dependencies started first.
test("rolling - restart of kubelet in batches of at most 2 nodes, coredns keeping one node up", (t) => {
  const request: PlanRequest = { action: "restart_services", service: "kubelet", nodes: k8s, services, template: k8sTemplate };
  const plan = planAction({ ...request, rolling: { maxUnavailable: 2 } });
  t.deepEqual(compact(plan), [
    // batch 1: w1, w3
    "STOP w1 coredns | STOP w3 kube-proxy",
    "STOP w1 kube-proxy",
    "STOP w1 kubelet | STOP w3 kubelet",
    "START w1 kubelet | START w3 kubelet",
    "START w1 coredns | START w3 kube-proxy",
    "START w1 kube-proxy",
    // batch 2: w2, w4
    "STOP w2 coredns | STOP w4 kube-proxy",
    "STOP w2 kube-proxy",
    "STOP w2 kubelet | STOP w4 kubelet",
    "START w2 kubelet | START w4 kubelet",
    "START w2 coredns | START w4 kube-proxy",
    "START w2 kube-proxy",
    // batch 3: w5
    "STOP w5 kube-proxy",
    "STOP w5 kubelet",
    "START w5 kubelet",
    "START w5 kube-proxy",
  ]);
  t.deepEqual(sortedTasks(plan), sortedTasks(planAction(request)), "the same tasks as the restart at once");
  const batches = new Map<number, Set<string>>();
  for (const g of planGraph({ ...request, rolling: { maxUnavailable: 2 } }).groups) {
    const set = batches.get(g.batch!) ?? new Set<string>();
    g.nodeIds.forEach((n) => set.add(n));
    batches.set(g.batch!, set);
  }
  t.deepEqual([...batches].map(([b, nodes]) => [b, [...nodes].sort()]), [
    [1, ["w1", "w3"]],
    [2, ["w2", "w4"]],
    [3, ["w5"]],
  ]);
});

// nginx (no quantities.min in webapp, nothing depends on it) on four nodes.
test("rolling - nginx on 4 nodes: 1 at a time is 4 STOP/START batches in node order, 2 at a time is 2", (t) => {
  const request: PlanRequest = { action: "restart_services", service: "nginx", nodes: webapp, services, template: webappTemplate };
  t.deepEqual(compact(planAction({ ...request, rolling: { maxUnavailable: 1 } })), [
    "STOP web1 nginx",
    "START web1 nginx",
    "STOP web2 nginx",
    "START web2 nginx",
    "STOP web3 nginx",
    "START web3 nginx",
    "STOP web4 nginx",
    "START web4 nginx",
  ]);
  t.deepEqual(compact(planAction({ ...request, rolling: { maxUnavailable: 2 } })), [
    "STOP web1 nginx | STOP web2 nginx",
    "START web1 nginx | START web2 nginx",
    "STOP web3 nginx | STOP web4 nginx",
    "START web3 nginx | START web4 nginx",
  ]);
  t.deepEqual(compact(planAction(request)), [
    "STOP web1 nginx | STOP web2 nginx | STOP web3 nginx | STOP web4 nginx",
    "START web1 nginx | START web2 nginx | START web3 nginx | START web4 nginx",
  ]);
});

// quantities.min 3 of 4 leaves room for one node down, whatever maxUnavailable asks; min 4 for none.
test("rolling - quantities.min shrinks the batches, and refuses when not even one node may stop", (t) => {
  const withMin = (min: number): ClusterTemplate => ({
    ...webappTemplate,
    constraints: { ...webappTemplate.constraints, services: { ...webappTemplate.constraints?.services, nginx: { quantities: { min } } } },
  });
  const request: PlanRequest = { action: "restart_services", service: "nginx", nodes: webapp, services, rolling: { maxUnavailable: 3 } };
  const plan = planAction({ ...request, template: withMin(3) });
  t.deepEqual(
    plan.stages.map((s) => s.length),
    [1, 1, 1, 1, 1, 1, 1, 1],
    "one node at a time",
  );
  t.deepEqual(compact(planAction({ ...request, template: withMin(2) })).slice(0, 2), [
    "STOP web1 nginx | STOP web2 nginx",
    "START web1 nginx | START web2 nginx",
  ]);
  const details = badRequest(
    t,
    { ...request, template: withMin(4) },
    /cannot stop any node of nginx: it runs on 4 nodes and template webapp keeps at least 4 running/,
  );
  t.like(details, { constraint: "quantities", service: "nginx", min: 4, nodes: 4, maxUnavailable: 3 });
});

test("rolling - when no limit is reached the plan is the restart at once", (t) => {
  const request: PlanRequest = { action: "restart_services", nodes: webapp, services, template: webappTemplate };
  t.deepEqual(planAction({ ...request, rolling: { maxUnavailable: 4 } }).stages, planAction(request).stages);
  t.true(planGraph({ ...request, rolling: { maxUnavailable: 4 } }).groups.every((g) => g.batch === 1));
  t.true(planGraph(request).groups.every((g) => !("batch" in g)), "a plan that is not rolling has no batches");
});

test("rolling - configure with restart bootstraps and restarts one node at a time", (t) => {
  const plan = planAction({
    action: "cluster_configure_with_restart",
    nodes: webapp.slice(1),
    services,
    rolling: { maxUnavailable: 1 },
    template: webappTemplate,
  });
  const nodeOrder = plan.stages.map((s) => [...new Set(s.map((x) => x.nodeId))].join());
  t.deepEqual(nodeOrder.filter((n, i) => n !== nodeOrder[i - 1]), ["web2", "web3", "web4"]);
  t.deepEqual(compact(plan).slice(0, 9), [
    "BOOTSTRAP web2",
    "STOP web2 nginx",
    "CONFIGURE web2 app-config",
    "CONFIGURE web2 base",
    "STOP web2 node-app",
    "CONFIGURE web2 nginx",
    "CONFIGURE web2 node-app",
    "START web2 node-app",
    "START web2 nginx",
  ]);
});

test("rolling - the restart of a node action's changed nodes is rolling too; the new nodes come first", (t) => {
  const request: PlanRequest = {
    action: "add_nodes",
    nodes: [...webapp, { id: "web5", services: WEB }],
    services,
    addedNodes: ["web5"],
    changedNodes: ["web1", "web2", "web3", "web4"],
    restart: true,
    rolling: { maxUnavailable: 2 },
    template: webappTemplate,
  };
  // nginx and node-app may lose 2 nodes at a time, postgresql (on web1 only) its one node
  const batches = planGraph(request).groups.flatMap((g) => (g.batch === undefined ? [] : [`${g.batch}: ${g.nodeIds.join(",")}`]));
  t.deepEqual([...new Set(batches)].sort(), ["1: web1", "1: web1,web2", "2: web3,web4"]);
  const plan = planAction(request);
  const lastOfWeb5 = Math.max(...plan.stages.flatMap((s, i) => (s.some((x) => x.nodeId === "web5") ? [i] : [])));
  const firstStop = plan.stages.findIndex((s) => s.some((x) => x.taskName === "STOP"));
  t.true(lastOfWeb5 < firstStop);
});

const badRequest = (t: import("ava").ExecutionContext, request: PlanRequest, message: RegExp): Record<string, unknown> => {
  const err = t.throws(() => planAction(request));
  t.true(isCorralError(err) && err.status === 400, String(err));
  t.regex(err?.message ?? "", message);
  return ((err as { details?: Record<string, unknown> })?.details ?? {}) as Record<string, unknown>;
};

test("rolling - refusals name what makes them impossible", (t) => {
  const all = { action: "restart_services", nodes: k8s, services, template: k8sTemplate } as const;
  const details = badRequest(
    t,
    { ...all, rolling: { maxUnavailable: 3 } },
    /cannot stop any node of etcd: it runs on 1 node and template k8s-distributed keeps at least 1 running \(constraints\.services\.etcd\.quantities\.min\); restart it without rolling, or restart the other services one by one/,
  );
  t.like(details, { constraint: "quantities", service: "etcd", min: 1, nodes: 1 });
  for (const bad of [0, 1.5, "2", -1, null]) {
    badRequest(t, { ...all, service: "kube-proxy", rolling: { maxUnavailable: bad as never } }, /rolling\.maxUnavailable must be an integer of at least 1/);
  }
  badRequest(t, { ...all, service: "kube-proxy", rolling: "fast" as never }, /rolling\.maxUnavailable must be an integer of at least 1/);
  const { template: _template, ...withoutTemplate } = all;
  badRequest(t, { ...withoutTemplate, service: "kube-proxy", rolling: { maxUnavailable: 1 } }, /rolling needs the cluster's template/);
  badRequest(t, { ...all, action: "cluster_configure", rolling: { maxUnavailable: 1 } }, /CLUSTER_CONFIGURE does not take rolling/);
  badRequest(t, { ...all, action: "stop_services", rolling: { maxUnavailable: 1 } }, /STOP_SERVICES does not take rolling/);
  badRequest(
    t,
    { ...all, action: "add_nodes", addedNodes: ["w5"], rolling: { maxUnavailable: 1 } },
    /ADD_NODES takes rolling only with restart: true/,
  );
  // coredns (quantities.min 1) on its two nodes may lose one; with a larger maxUnavailable it still loses one
  t.notThrows(() => planAction({ ...all, service: "coredns", rolling: { maxUnavailable: 5 } }));
  badRequest(
    t,
    { ...all, service: "kubelet", rolling: { maxUnavailable: 1 }, options: { startUnplannedDependencies: true } },
    /does not start containerd again: it is not restarted/,
  );
  const odd: Service[] = [{ name: "s", dependencies: { provides: [], conflicts: [], install: { requires: [], uses: [] }, runtime: { requires: [], uses: [] } }, provisioner: { actions: { stop: { type: "shell", fields: {} } } } }];
  badRequest(
    t,
    { action: "restart_services", nodes: [{ id: "a", services: ["s"] }], services: odd, template: k8sTemplate, rolling: { maxUnavailable: 1 } },
    /cannot bring s back: it defines stop but not start/,
  );
});

// ---- properties ----

const ACTIONS = ["install", "configure", "initialize", "start", "stop"] as const;

interface RollingWorld {
  request: PlanRequest;
  maxUnavailable: number;
  mins: Map<string, number>;
  /** Nodes that remain on the cluster (the ones a restart counts). */
  remaining: PlanNode[];
  /** Runtime dependencies (requires and uses) among the services on the remaining nodes, transitively. */
  runtimeClosure: Map<string, Set<string>>;
}

/** Random clusters of acyclic services (a service depends only on earlier ones), and a restart of some kind. */
const rollingWorld: fc.Arbitrary<RollingWorld> = fc
  .record({
    serviceCount: fc.integer({ min: 1, max: 6 }),
    actions: fc.array(fc.subarray([...ACTIONS]), { minLength: 6, maxLength: 6 }),
    // mostly services with both stop and start: only those can roll
    stopStart: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
    deps: fc.array(fc.record({ requires: fc.array(fc.nat(8), { maxLength: 2 }), uses: fc.array(fc.nat(8), { maxLength: 2 }) }), {
      minLength: 6,
      maxLength: 6,
    }),
    placements: fc.array(fc.array(fc.nat(5), { maxLength: 4 }), { minLength: 1, maxLength: 10 }),
    mins: fc.array(fc.nat(3), { minLength: 6, maxLength: 6 }),
    kind: fc.constantFrom("restart_all", "restart_one", "configure_with_restart", "add_nodes", "remove_nodes"),
    pick: fc.nat(50),
    changed: fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }),
    maxUnavailable: fc.integer({ min: 1, max: 4 }),
  })
  .map((r) => {
    const names = Array.from({ length: r.serviceCount }, (_, i) => `s${i}`);
    const defs: Service[] = names.map((name, i) => {
      const keys = new Set<string>(r.actions[i]);
      if (r.stopStart[i]) {
        keys.add("stop");
        keys.add("start");
      }
      const d = r.deps[i]!;
      const earlier = (xs: number[]): string[] => [...new Set(xs.filter((x) => x < i).map((x) => names[x]!))];
      return {
        name,
        dependencies: {
          provides: [],
          conflicts: [],
          install: { requires: [], uses: [] },
          runtime: { requires: earlier(d.requires), uses: earlier(d.uses) },
        },
        provisioner: { actions: Object.fromEntries([...keys].map((k) => [k, { type: "shell", fields: {} }])) },
      };
    });
    const nodes: PlanNode[] = r.placements.map((p, k) => ({
      id: `n${k}`,
      services: [...new Set(p.filter((x) => x < r.serviceCount).map((x) => names[x]!))],
    }));
    const template: ClusterTemplate = {
      ...k8sTemplate,
      name: "random",
      constraints: { services: Object.fromEntries(names.map((s, i) => [s, { quantities: { min: r.mins[i]! } }])) },
    };
    const mins = new Map(names.map((s, i) => [s, r.mins[i]!] as const));
    const base = { nodes, services: defs, template, rolling: { maxUnavailable: r.maxUnavailable } } as const;
    let request: PlanRequest;
    let remaining = nodes;
    const last = nodes.length - 1;
    const changedOf = (candidates: PlanNode[]): string[] => candidates.filter((_n, k) => r.changed[k]).map((n) => n.id);
    const onCluster = [...new Set(nodes.flatMap((n) => n.services))].sort();
    if (r.kind === "restart_one" && onCluster.length > 0) {
      request = { ...base, action: "restart_services", service: onCluster[r.pick % onCluster.length]! };
    } else if (r.kind === "configure_with_restart") {
      request = { ...base, action: "cluster_configure_with_restart" };
    } else if (r.kind === "add_nodes" && nodes.length > 1) {
      request = { ...base, action: "add_nodes", addedNodes: [nodes[last]!.id], changedNodes: changedOf(nodes.slice(0, last)), restart: true };
    } else if (r.kind === "remove_nodes" && nodes.length > 1) {
      remaining = nodes.slice(0, last);
      request = { ...base, action: "remove_nodes", removedNodes: [nodes[last]!.id], changedNodes: changedOf(remaining), restart: true };
    } else {
      request = { ...base, action: "restart_services" };
    }
    const present = new Set(remaining.flatMap((n) => n.services));
    const runtimeClosure = new Map<string, Set<string>>();
    const closureOf = (s: string): Set<string> => {
      const known = runtimeClosure.get(s);
      if (known) return known;
      const out = new Set<string>();
      const rt = defs.find((d) => d.name === s)!.dependencies.runtime;
      for (const dep of [...rt.requires, ...rt.uses]) {
        if (!present.has(dep)) continue;
        out.add(dep);
        for (const x of closureOf(dep)) out.add(x);
      }
      runtimeClosure.set(s, out);
      return out;
    };
    for (const s of present) closureOf(s);
    return { request, maxUnavailable: r.maxUnavailable, mins, remaining, runtimeClosure };
  });

/** The rolling plan, or the refusal's message; the same request without `rolling` is always planned. */
function plans(w: RollingWorld): { rolling: Plan | string; atOnce: Plan } {
  const { rolling: _rolling, ...atOnce } = w.request;
  const plain = planAction(atOnce);
  try {
    return { rolling: planAction(w.request), atOnce: plain };
  } catch (err) {
    if (!isCorralError(err) || err.status !== 400) throw err;
    return { rolling: err.message, atOnce: plain };
  }
}

/** Services a restart stops on the remaining nodes (from the plan without `rolling`), and on how many nodes each runs. */
function stoppedServices(w: RollingWorld, atOnce: Plan): Map<string, number> {
  const remainingIds = new Set(w.remaining.map((n) => n.id));
  const out = new Map<string, number>();
  for (const t of atOnce.stages.flat()) {
    if (t.taskName === "STOP" && remainingIds.has(t.nodeId)) {
      out.set(t.service, w.remaining.filter((n) => n.services.includes(t.service)).length);
    }
  }
  return out;
}

test("rolling properties - refused exactly when a stopped service cannot lose a node or cannot start again", (t) => {
  fc.assert(
    fc.property(rollingWorld, (w) => {
      const { rolling, atOnce } = plans(w);
      const defs = new Map(w.request.services.map((s) => [s.name, s]));
      const impossible = [...stoppedServices(w, atOnce)].some(
        ([s, running]) => Math.min(w.maxUnavailable, running - (w.mins.get(s) ?? 0)) < 1 || !("start" in defs.get(s)!.provisioner.actions),
      );
      return impossible === (typeof rolling === "string");
    }),
    { numRuns: 400 },
  );
  t.pass();
});

test("rolling properties - the same tasks as the restart at once, no node twice in a stage, no empty stage", (t) => {
  fc.assert(
    fc.property(rollingWorld, (w) => {
      const { rolling, atOnce } = plans(w);
      if (typeof rolling === "string") return true;
      const same = JSON.stringify(sortedTasks(rolling)) === JSON.stringify(sortedTasks(atOnce));
      return same && rolling.stages.every((s) => s.length > 0 && new Set(s.map((x) => x.nodeId)).size === s.length);
    }),
    { numRuns: 400 },
  );
  t.pass();
});

test("rolling properties - at most maxUnavailable nodes of a service down in any stage, never fewer than its min running", (t) => {
  fc.assert(
    fc.property(rollingWorld, (w) => {
      const { rolling } = plans(w);
      if (typeof rolling === "string") return true;
      const remainingIds = new Set(w.remaining.map((n) => n.id));
      const hosts = (s: string): number => w.remaining.filter((n) => n.services.includes(s)).length;
      /** Per service, nodes stopped in an earlier or this stage and not started in an earlier stage. */
      const down = new Map<string, Set<string>>();
      for (const stage of rolling.stages) {
        const startedNow: PlannedTask[] = [];
        for (const task of stage) {
          if (!remainingIds.has(task.nodeId)) continue;
          if (task.taskName === "STOP") {
            const set = down.get(task.service) ?? new Set<string>();
            set.add(task.nodeId);
            down.set(task.service, set);
          } else if (task.taskName === "START") startedNow.push(task);
        }
        for (const [s, nodes] of down) {
          if (nodes.size > w.maxUnavailable) return false;
          if (hosts(s) - nodes.size < (w.mins.get(s) ?? 0)) return false;
        }
        for (const task of startedNow) down.get(task.service)?.delete(task.nodeId);
      }
      return true;
    }),
    { numRuns: 400 },
  );
  t.pass();
});

test("rolling properties - batches follow each other; within a batch dependents stop first and dependencies start first", (t) => {
  fc.assert(
    fc.property(rollingWorld, (w) => {
      const { rolling } = plans(w);
      if (typeof rolling === "string") return true;
      const batchOf = new Map<string, number>();
      for (const g of planGraph(w.request).groups) {
        if (g.batch === undefined) continue;
        for (const n of g.nodeIds) batchOf.set(`${g.taskName}|${n}|${g.service}`, g.batch);
      }
      const stageOf = new Map<string, number>();
      rolling.stages.forEach((s, i) => s.forEach((x) => stageOf.set(taskKey(x), i)));
      const batched = [...batchOf.keys()].map((k) => ({ key: k, batch: batchOf.get(k)!, stage: stageOf.get(k)! }));
      // every task of a batch before every task of a later batch
      for (const a of batched) for (const b of batched) if (a.batch < b.batch && a.stage >= b.stage) return false;
      // per node: STOP, CONFIGURE, START of a service in this order
      const chain = ["BOOTSTRAP", "STOP", "CONFIGURE", "START"];
      for (const a of batched) {
        for (const b of batched) {
          const [ta, na, sa] = a.key.split("|");
          const [tb, nb, sb] = b.key.split("|");
          if (na !== nb || a.batch !== b.batch) continue;
          const sameChain = sa === sb || ta === "BOOTSTRAP";
          if (sameChain && chain.indexOf(ta!) < chain.indexOf(tb!) && a.stage >= b.stage) return false;
          // x depends on y at runtime: STOP x before STOP y, START y before START x (same batch, any nodes)
        }
      }
      for (const a of batched) {
        for (const b of batched) {
          if (a.batch !== b.batch) continue;
          const [ta, , x] = a.key.split("|");
          const [tb, , y] = b.key.split("|");
          if (!w.runtimeClosure.get(x!)?.has(y!)) continue;
          if (ta === "STOP" && tb === "STOP" && a.stage >= b.stage) return false;
          if (ta === "START" && tb === "START" && b.stage >= a.stage) return false;
        }
      }
      return true;
    }),
    { numRuns: 300 },
  );
  t.pass();
});
