/**
 * Node health from provisioners' reports (src/engine/health/reports.ts) on a real nats-server: what a finding writes
 * into its node, the `node.health` events of changes, and the reports ignored (older, foreign, unknown).
 */
import { randomUUID } from "node:crypto";
import type { ExecutionContext } from "ava";
import {
  clusterEventFilter,
  decode,
  encode,
  healthReportSubject,
  type NodeHealthEntry,
  type NodeHealthEvent,
  type NodeHealthReport,
  type Tenant,
} from "@corral/contracts";
import { applyHealthReport, startHealthReports } from "../src/engine/health/reports.js";
import { HEALTH_REFRESH_MS } from "../src/domain/node-health.js";
import { nodeIdsOf } from "../src/domain/ids.js";
import { nodeView } from "../src/domain/views.js";
import { eventually } from "../../../test/helpers/eventually.js";
import { testWithNats, type NatsContext } from "../../../test/helpers/nats-test.js";
import { startCore, type Core } from "./helpers/core.js";

const test = testWithNats("clusters-node-health-test");

interface Fixture {
  core: Core;
  tenant: string;
  clusterId: string;
  nodes: string[];
  /** `node.health` events published for the cluster so far. */
  events: NodeHealthEvent[];
}

async function fixture(t: ExecutionContext<NatsContext>): Promise<Fixture> {
  const tenant: Tenant = { name: `t${randomUUID().slice(0, 8)}`, workers: 1 };
  const core = await startCore(t.context.nc, { tenant });
  t.teardown(() => core.stop());
  const clusterId = await core.operations.create(core.admin, { name: `c${randomUUID().slice(0, 6)}`, clusterTemplate: "t1", numMachines: 2 });
  const events: NodeHealthEvent[] = [];
  const sub = t.context.nc.subscribe(clusterEventFilter(tenant.name, clusterId), {
    callback: (_err, msg) => {
      const event = decode<NodeHealthEvent>(msg.data);
      if (event.type === "node.health") events.push(event);
    },
  });
  t.teardown(() => sub.unsubscribe());
  return { core, tenant: tenant.name, clusterId, nodes: nodeIdsOf(clusterId, 2), events };
}

const report = (f: Fixture, nodes: Array<Partial<NodeHealthEntry> & Pick<NodeHealthEntry, "nodeId" | "state" | "checkedAt">>, tenant = f.tenant): NodeHealthReport => ({
  tenant,
  provisionerId: "p1",
  full: false,
  nodes: nodes.map((n) => ({ clusterId: f.clusterId, message: `found ${n.state}`, ...n })),
});

const healthOf = async (f: Fixture, nodeId: string) => (await f.core.deps.nodes.get(f.clusterId, nodeId))?.health;

test("a finding is written into its node and announced; the same finding again is not", async (t) => {
  const f = await fixture(t);
  const settle = () => t.context.nc.flush();
  const [a, b] = f.nodes as [string, string];
  const t0 = 1_700_000_000_000;
  await applyHealthReport(f.core.deps, f.tenant, report(f, [{ nodeId: a, state: "healthy", checkedAt: t0 }, { nodeId: b, state: "healthy", checkedAt: t0 }]));
  t.deepEqual(await healthOf(f, a), { state: "healthy", message: "found healthy", since: t0, checkedAt: t0 });
  const node = await f.core.deps.nodes.get(f.clusterId, a);
  t.deepEqual(nodeView(node!).health, { state: "healthy", message: "found healthy", since: t0, checkedAt: t0 }, "GET /clusters/{id} shows it");
  await eventually(async () => (await settle(), f.events.length === 2), { what: "two first findings announced" });
  t.like(f.events.find((e) => e.nodeId === a), { type: "node.health", tenant: f.tenant, clusterId: f.clusterId, state: "healthy", since: t0, checkedAt: t0 });
  t.false("previous" in f.events[0]!, "a first finding has no previous state");

  // Unchanged within a minute: nothing written, nothing announced.
  await applyHealthReport(f.core.deps, f.tenant, report(f, [{ nodeId: a, state: "healthy", checkedAt: t0 + 30_000 }]));
  t.is((await healthOf(f, a))?.checkedAt, t0);
  // Unchanged, a minute later: checkedAt refreshed, no event.
  await applyHealthReport(f.core.deps, f.tenant, report(f, [{ nodeId: a, state: "healthy", checkedAt: t0 + HEALTH_REFRESH_MS }]));
  t.deepEqual(await healthOf(f, a), { state: "healthy", message: "found healthy", since: t0, checkedAt: t0 + HEALTH_REFRESH_MS });
  await settle();
  t.is(f.events.length, 2);
});

test("a state change is announced with the state before; a message change keeps since; older findings are ignored", async (t) => {
  const f = await fixture(t);
  const settle = () => t.context.nc.flush();
  const [a] = f.nodes as [string];
  const t0 = 1_700_000_000_000;
  await applyHealthReport(f.core.deps, f.tenant, report(f, [{ nodeId: a, state: "healthy", checkedAt: t0 }]));
  await applyHealthReport(f.core.deps, f.tenant, report(f, [{ nodeId: a, state: "missing", message: "container gone", checkedAt: t0 + 5_000 }]));
  t.deepEqual(await healthOf(f, a), { state: "missing", message: "container gone", since: t0 + 5_000, checkedAt: t0 + 5_000 });
  await applyHealthReport(f.core.deps, f.tenant, report(f, [{ nodeId: a, state: "missing", message: "container still gone", checkedAt: t0 + 10_000 }]));
  t.deepEqual(await healthOf(f, a), { state: "missing", message: "container still gone", since: t0 + 5_000, checkedAt: t0 + 10_000 });
  await applyHealthReport(f.core.deps, f.tenant, report(f, [{ nodeId: a, state: "healthy", checkedAt: t0 + 7_000 }]));
  t.is((await healthOf(f, a))?.state, "missing", "a finding older than the stored one changes nothing");

  await eventually(async () => (await settle(), f.events.length === 3), { what: "three changes announced" });
  t.like(f.events[1], { state: "missing", previous: "healthy", since: t0 + 5_000, message: "container gone" });
  t.like(f.events[2], { state: "missing", previous: "missing", since: t0 + 5_000, message: "container still gone" });
});

test("reports of another tenant, unknown clusters and unknown nodes change nothing", async (t) => {
  const f = await fixture(t);
  const [a] = f.nodes as [string];
  await applyHealthReport(f.core.deps, "someone-else", report(f, [{ nodeId: a, state: "missing", checkedAt: 1 }], "someone-else"));
  await applyHealthReport(f.core.deps, f.tenant, { ...report(f, [{ nodeId: a, state: "missing", checkedAt: 1 }]), nodes: [{ clusterId: "99999999", nodeId: a, state: "missing", message: "", checkedAt: 1 }] });
  await applyHealthReport(f.core.deps, f.tenant, report(f, [{ nodeId: `${f.clusterId}-9999`, state: "missing", checkedAt: 1 }]));
  t.is(await healthOf(f, a), undefined);
});

test("reports published on the tenant's subject are applied by the service's subscription", async (t) => {
  const f = await fixture(t);
  const feed = startHealthReports(f.core.deps);
  t.teardown(() => feed.stop());
  await t.context.nc.flush();
  const [a] = f.nodes as [string];
  // One naming another tenant than its subject's is dropped.
  t.context.nc.publish(healthReportSubject(f.tenant), encode(report(f, [{ nodeId: a, state: "missing", checkedAt: 1 }], "other")));
  t.context.nc.publish(healthReportSubject(f.tenant), encode(report(f, [{ nodeId: a, state: "unreachable", checkedAt: 2 }])));
  await eventually(async () => (await healthOf(f, a))?.state === "unreachable", { what: "the report applied" });
  t.is((await healthOf(f, a))?.checkedAt, 2);
});
