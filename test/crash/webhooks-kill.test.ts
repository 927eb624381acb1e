/**
 * Crash test of the webhooks service: it runs as a real child process and is killed with SIGKILL while it delivers
 * (and while events keep coming), then started again. Every event must reach the receiver (at least once, the same
 * `webhook-id` on a repeat), each cluster's in order of first receipt.
 */
import anyTest, { type TestFn } from "ava";
import { jetstream } from "@nats-io/jetstream";
import { clusterEventSubject, encode, withUrlCredentials, type ClusterStatusEvent } from "@corral/contracts";
import { api, SUPERADMIN, type Caller } from "../helpers/api.js";
import { eventually } from "../helpers/eventually.js";
import { createProcessSet, startServiceProcess, type ProcessSet, type ServiceProcess } from "../helpers/processes.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

interface Context {
  sys: TestSystem;
  procs: ProcessSet;
  webhooks: ServiceProcess;
  receiver: WebhookReceiver;
}
const test = anyTest as TestFn<Context>;

const ADMIN: Caller = { user: "admin", tenant: "crashy" };
const LEASE_MS = 1500;

test.before(async (t) => {
  const sys = await startSystem({ requestTimeoutMs: 5_000 });
  t.context.sys = sys;
  t.context.procs = createProcessSet();
  t.context.receiver = await startWebhookReceiver();
  const serverUrl = sys.nats.url.replace(/\/\/[^@/]*@/, "//");
  t.context.webhooks = await t.context.procs.start(() =>
    startServiceProcess({
      name: "webhooks",
      entry: "services/webhooks/src/index.ts",
      env: {
        CORRAL_NATS_URL: withUrlCredentials(serverUrl, sys.credentials!.services.webhooks),
        CORRAL_LOG_LEVEL: "info",
        CORRAL_METRICS_ENABLED: "false",
        CORRAL_WEBHOOKS_ALLOWEDNETWORKS: "127.0.0.1/32",
        CORRAL_WEBHOOKS_RETRYDELAYSMS: "100,200,400,800,1600,3200",
        CORRAL_WEBHOOKS_LEASEMS: String(LEASE_MS),
      },
      readyMsg: "webhooks service started",
    }),
  );
  const r = await api(sys.baseUrl, "POST", "/tenants", { ...SUPERADMIN, body: { tenant: { name: "crashy", workers: 0 } } });
  if (r.status !== 200) throw new Error(`tenant: ${r.status} ${r.text}`);
});

test.after.always(async (t) => {
  await t.context.procs?.stopAll();
  await t.context.receiver?.stop();
  await t.context.sys?.stop();
});

async function publish(t: { context: Context }, clusterId: string, from: number, count: number): Promise<void> {
  const js = jetstream(t.context.sys.nc);
  for (let n = from; n < from + count; n++) {
    const event: ClusterStatusEvent = {
      type: "cluster.status",
      tenant: "crashy",
      clusterId,
      at: Date.now(),
      status: "pending",
      action: "cluster_create",
      planId: `${clusterId}-p`,
      progress: { stepscompleted: n, stepstotal: 10_000 },
    };
    await js.publish(clusterEventSubject("crashy", clusterId, "cluster.status"), encode(event));
  }
}

test.serial("kill -9 of the delivering process loses no event and keeps each cluster's order", async (t) => {
  const { sys, receiver, procs } = t.context;
  const created = await api(sys.baseUrl, "POST", "/webhooks", { ...ADMIN, body: { url: receiver.url("/hook"), events: ["cluster.status"] } });
  t.is(created.status, 200, created.text);
  receiver.setSecret("/hook", created.body.secret);
  // Some answers fail, so retries are pending when the process dies.
  receiver.failNext("/hook", 10, 500);
  receiver.slow("/hook", 40);

  const clusters = ["k1", "k2", "k3", "k4"];
  const before = 60;
  const during = 40;
  for (const c of clusters) await publish(t, c, 0, before);
  await eventually(() => receiver.delivered("/hook").length >= 40, { what: "some deliveries before the kill", timeoutMs: 30_000 });
  const exit = await t.context.webhooks.kill("SIGKILL");
  t.is(exit.signal, "SIGKILL");
  const atKill = receiver.delivered("/hook").length;
  t.true(atKill < clusters.length * before, `still deliveries to make at the kill (${atKill} done)`);
  // Events keep coming while no instance runs.
  for (const c of clusters) await publish(t, c, before, during);
  t.context.webhooks = await procs.start(() => t.context.webhooks.respawn());

  const total = clusters.length * (before + during);
  await eventually(() => receiver.delivered("/hook").length === total, {
    what: `all ${total} deliveries after the restart`,
    timeoutMs: 60_000,
    intervalMs: 200,
  });
  const requests = receiver.requests("/hook");
  t.true(requests.every((r) => r.verified), requests.find((r) => !r.verified)?.problem);
  for (const c of clusters) {
    const steps = receiver
      .delivered("/hook")
      .filter((r) => (r.payload.data as ClusterStatusEvent).clusterId === c)
      .map((r) => (r.payload.data as ClusterStatusEvent).progress.stepscompleted);
    t.deepEqual(steps, Array.from({ length: before + during }, (_, i) => i), `cluster ${c}: each event once, in order`);
  }
  // A repeat after the crash carries the id of the first delivery.
  const ids = new Set(requests.map((r) => r.id));
  t.is(ids.size, total);
  t.log(`${atKill} delivered before the kill; ${requests.length} requests for ${total} events`);
});
