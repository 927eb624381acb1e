import anyTest, { type TestFn } from "ava";
import type { NatsConnection } from "@nats-io/transport-node";
import { startNats, type NatsHandle } from "@corral/deploy";
import { subjects, type CorralError } from "@corral/contracts";
import { call, callEndpoint, connectNats, silentLogger } from "@corral/shared";
import { planAction } from "@corral/solver";
import { startSolverService, type SolverService } from "@corral/solver/service";
import { fixtureHardwareTypes, fixtureImageTypes, fixtureServices, fixtureTemplate } from "../../../test/helpers/fixture-catalog.js";

const test = anyTest as TestFn<{ nats: NatsHandle; nc: NatsConnection; solver: SolverService }>;
test.before(async (t) => {
  t.context.nats = await startNats({ jetstream: false });
  t.context.nc = await connectNats({ url: t.context.nats.url, name: "solver-test" });
  t.context.solver = await startSolverService({ nc: t.context.nc, log: silentLogger });
});
test.after.always(async (t) => {
  await t.context.solver?.stop();
  await t.context.nc?.drain();
  await t.context.nats?.stop();
});

const layoutRequest = (numMachines: number) => ({
  template: fixtureTemplate("k8s-distributed"),
  provider: { name: "aws-eu-west-1" },
  catalog: { services: fixtureServices(), hardwareTypes: fixtureHardwareTypes(), imageTypes: fixtureImageTypes() },
  numMachines,
  clusterId: "00000001",
  clusterName: "k8s",
});

test("solver service - solves a layout over NATS", async (t) => {
  const solution = await callEndpoint(t.context.nc, "solver.layout", layoutRequest(5));
  t.is(solution.nodes.length, 5);
  t.is(solution.nodes.filter((n) => n.services.includes("kube-apiserver")).length, 1);
  t.is(solution.nodes.filter((n) => n.services.includes("kubelet")).length, 4);
});

test("solver service - an impossible layout is a 400 naming the constraint", async (t) => {
  const err = await t.throwsAsync<CorralError>(callEndpoint(t.context.nc, "solver.layout", layoutRequest(2)));
  t.is(err?.status, 400);
  t.is(err?.message, "Size must be at least 3. Now it's 2 (template k8s-distributed, constraints.size)");
});

test("solver service - plans a cluster create and expands macros over NATS", async (t) => {
  const solution = await callEndpoint(t.context.nc, "solver.layout", layoutRequest(4));
  const nodes = solution.nodes.map((n) => ({ id: n.id, services: n.services }));
  const plan = await callEndpoint(t.context.nc, "solver.plan", {
    action: "cluster_create",
    nodes,
    services: fixtureServices(),
  });
  t.is(plan.action, "CLUSTER_CREATE");
  t.deepEqual(plan, planAction({ action: "cluster_create", nodes, services: fixtureServices() }), "the same plan as in process");
  t.true(plan.stages.length > 0);
  for (const stage of plan.stages) t.is(new Set(stage.map((task) => task.nodeId)).size, stage.length);

  const macroNodes = solution.nodes.map((n) => ({
    id: n.id,
    nodenum: n.nodenum,
    services: n.services,
    properties: { hostname: n.properties.hostname, ipaddresses: { bind_v4: `10.0.0.${n.nodenum - 999}` } },
  }));
  const expanded = await callEndpoint(t.context.nc, "solver.expand", {
    nodes: macroNodes,
    config: { api: "https://%host.service.kube-apiserver%:6443" },
  });
  const apiserver = solution.nodes.find((n) => n.services.includes("kube-apiserver"));
  t.is(Object.keys(expanded).length, 4);
  for (const value of Object.values(expanded)) t.like(value, { api: `https://${apiserver?.properties.hostname}:6443` });
});

test("solver service - malformed requests are 400s, not crashes", async (t) => {
  for (const subject of Object.values(subjects.solver)) {
    const err = await t.throwsAsync<CorralError>(call(t.context.nc, subject, "nonsense"));
    t.is(err?.status, 400, subject);
  }
});
