/**
 * The chaos suite, short: about 20 clusters of mixed templates through create, configure, add services, stop, start
 * and delete on a three-node NATS cluster with two instances of every service and three provisioners, while every
 * kind of fault is injected (SIGKILL of service instances, provisioners, a NATS node, Redis; SIGSTOP past the
 * timeouts). Nothing may be lost or run twice, and every cluster ends as its last operation leaves it.
 * bench/chaos/chaos.ts is the long version with the numbers.
 */
import anyTest, { type TestFn } from "ava";
import { runChaos } from "../helpers/chaos/chaos-run.js";
import { startChaosSystem, type ChaosSystem } from "../helpers/chaos/chaos-system.js";
import { verdictSummary } from "../helpers/chaos/checker.js";

const test = anyTest as TestFn<{ sys: ChaosSystem }>;

test.before(async (t) => {
  t.timeout(120_000);
  t.context.sys = await startChaosSystem({ provisionerCapacity: 6 });
});

test.after.always(async (t) => {
  await t.context.sys?.stop();
});

test("chaos - every kind of fault while clusters go through their lifecycle: nothing lost, nothing run twice, every cluster ends as it should", async (t) => {
  t.timeout(300_000);
  const report = await runChaos(t.context.sys, {
    tenant: "chaos",
    clusters: Number(process.env["CHAOS_CLUSTERS"] ?? 20),
    concurrency: 8,
    durationMs: Number(process.env["CHAOS_DURATION_MS"] ?? 90_000),
    workers: 18,
    sim: { delay_ms: "100" },
    faults: { gapMs: [500, 2_000], downMs: [200, 1_000], pauseGapMs: [1_000, 5_000] },
    settleTimeoutMs: 90_000,
  });
  const { verdict, workload } = report;
  t.log(JSON.stringify({ faults: report.faultsByKind, availability: report.availability, operationsCompleted: workload.operationsCompleted, verdict: verdictSummary(verdict) }));

  for (const kind of ["service", "provisioner", "nats-node", "redis", "pause"] as const) t.true(report.faultsByKind[kind] > 0, `no ${kind} fault injected`);
  t.deepEqual(workload.runs.filter((r) => r.failure).map((r) => `${r.spec.name} (${r.id ?? "no id"}): ${r.failure}`), []);
  t.true(workload.operationsCompleted >= 30, `only ${workload.operationsCompleted} operations completed`);
  t.deepEqual(verdict.wrongState, []);
  t.deepEqual(verdict.lostTasks, []);
  t.deepEqual(verdict.lostResults, []);
  if (verdict.duplicatedSideEffects.length > 0) t.log("faults:", JSON.stringify(report.faults));
  t.deepEqual(
    verdict.duplicatedSideEffects.map(
      (d) =>
        `${d.effect}: ${d.first.provisionerId} (pid ${d.first.pid}) ran dispatch ${d.first.dispatch} at ${d.first.startedAt}-${d.first.at}, ` +
        `its result stored at ${d.stored?.storedAt}; ${d.again.provisionerId} (pid ${d.again.pid}) ran dispatch ${d.again.dispatch} at ${d.again.startedAt}`,
    ),
    [],
  );
  t.true(verdict.sideEffects > 0 && verdict.results > 0);
});
