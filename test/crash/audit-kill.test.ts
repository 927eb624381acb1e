/**
 * Crash test of the audit log's plan ends: the metrics service runs as a real child process and is killed with
 * SIGKILL while it records plans' ends (and while more keep coming), then started again. Every end must be in the
 * audit log exactly once: none lost, none twice.
 */
import anyTest, { type TestFn } from "ava";
import { DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import {
  auditSubject,
  entriesOfAuditMessage,
  clusterEventSubject,
  consumers,
  decode,
  encode,
  streams,
  withUrlCredentials,
  type AuditEntry,
  type PlanFinishedEvent,
  type PlanProgressEvent,
} from "@corral/contracts";
import { eventually } from "../helpers/eventually.js";
import { createProcessSet, startServiceProcess, type ProcessSet, type ServiceProcess } from "../helpers/processes.js";
import { startRedis, type ServerHandle } from "../helpers/servers.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

interface Context {
  sys: TestSystem;
  redis: ServerHandle;
  procs: ProcessSet;
  metrics: ServiceProcess;
}
const test = anyTest as TestFn<Context>;

const TENANT = "crashy";

test.before(async (t) => {
  const sys = await startSystem({ requestTimeoutMs: 5_000 });
  t.context.sys = sys;
  t.context.redis = await startRedis();
  t.context.procs = createProcessSet();
  const serverUrl = sys.nats.url.replace(/\/\/[^@/]*@/, "//");
  t.context.metrics = await t.context.procs.start(() =>
    startServiceProcess({
      name: "metrics",
      entry: "services/metrics/src/index.ts",
      env: {
        CORRAL_NATS_URL: withUrlCredentials(serverUrl, sys.credentials!.services.metrics),
        CORRAL_REDIS_URL: t.context.redis.url,
        CORRAL_LOG_LEVEL: "info",
        CORRAL_METRICS_ENABLED: "false",
      },
      readyMsg: "metrics service started",
    }),
  );
});

test.after.always(async (t) => {
  await t.context.procs?.stopAll();
  await t.context.sys?.stop();
  await t.context.redis?.stop();
});

/** Plans `from` .. `from + count - 1` end: every third alone, the others inside the progress of their last write. */
async function endPlans(t: { context: Context }, from: number, count: number): Promise<void> {
  const js = jetstream(t.context.sys.nc);
  for (let n = from; n < from + count; n++) {
    const clusterId = `c${String(n).padStart(5, "0")}`;
    const base = { tenant: TENANT, clusterId, at: Date.now(), planId: `${clusterId}-1` };
    const failed = n % 2 === 1;
    const end: PlanFinishedEvent = {
      ...base,
      type: "plan.finished",
      action: "CLUSTER_CREATE",
      outcome: failed ? "failed" : "succeeded",
      startedBy: "alice",
      ...(failed ? { failure: { taskId: `${clusterId}-1-2`, taskName: "CONFIRM", message: "no", nodeId: `${clusterId}-1000`, service: "" } } : {}),
    };
    if (n % 3 === 0) {
      await js.publish(clusterEventSubject(TENANT, clusterId, "plan.finished"), encode(end));
    } else {
      const progress: PlanProgressEvent = { ...base, type: "plan.progress", stage: 1, stepscompleted: 2, stepstotal: 2, then: [end] };
      await js.publish(clusterEventSubject(TENANT, clusterId, "plan.progress"), encode(progress));
    }
  }
}

/** Every audit entry of the tenant, read from the stream. */
async function auditEntries(t: { context: Context }): Promise<AuditEntry[]> {
  const { nc } = t.context.sys;
  const subject = auditSubject(TENANT);
  const info = await (await jetstreamManager(nc)).streams.info(streams.audit, { subjects_filter: subject });
  const expected = Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
  if (expected === 0) return [];
  const consumer = await jetstream(nc).consumers.get(streams.audit, { filter_subjects: [subject], deliver_policy: DeliverPolicy.All });
  const entries: AuditEntry[] = [];
  let read = 0;
  for await (const m of await consumer.fetch({ max_messages: expected, expires: 5000 })) {
    entries.push(...entriesOfAuditMessage(decode(m.data)));
    if (++read >= expected) break;
  }
  return entries;
}

test.serial("kill -9 of the metrics service while it records plans' ends: each end is in the audit log once", async (t) => {
  const { procs, sys } = t.context;
  const N = 400;
  await endPlans(t, 0, N);
  await eventually(async () => (await auditEntries(t)).length >= 20, { what: "the first ends recorded", timeoutMs: 20_000, intervalMs: 20 });
  await t.context.metrics.kill();
  const atKill = (await auditEntries(t)).length;
  await endPlans(t, N, N);
  t.context.metrics = await procs.start(() => t.context.metrics.respawn());

  // Ends delivered but not acked before the kill come back once the consumer's ack wait (30 s) is over.
  const jsm = await jetstreamManager(sys.nc);
  await eventually(
    async () => {
      const info = await jsm.consumers.info(streams.events, consumers.planEnds);
      return info.num_pending === 0 && info.num_ack_pending === 0;
    },
    { what: "every end acked", timeoutMs: 90_000, intervalMs: 200 },
  );
  const entries = await auditEntries(t);
  const perPlan = new Map<string, number>();
  for (const e of entries) perPlan.set(e.requestId, (perPlan.get(e.requestId) ?? 0) + 1);
  t.is(perPlan.size, 2 * N, `every end recorded (${atKill} were at the kill)`);
  t.deepEqual([...perPlan].filter(([, n]) => n > 1), [], "none twice");
  t.true(atKill < 2 * N, "the kill came before the last end");
  const failed = entries.find((e) => e.requestId === "c00001-1");
  t.like(failed, { action: "plan.failed", user: "alice", target: "c00001", failedTask: "CONFIRM on c00001-1000", status: 500 });
});
