/**
 * Webhooks of a real cluster's life: the clusters service and a provisioner (sim provider) create and delete a
 * cluster, and the endpoint of its tenant is told of each status change and each plan's end, in order, signed.
 */
import anyTest, { type TestFn } from "ava";
import type { ClusterStatusEvent, PlanFinishedEvent } from "@corral/contracts";
import { api } from "../helpers/api.js";
import { createCluster, createClusterCatalog, waitForStatus } from "../helpers/cluster-fixture.js";
import { eventually } from "../helpers/eventually.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

const test = anyTest as TestFn<{ sys: TestSystem; receiver: WebhookReceiver }>;

test.before(async (t) => {
  t.context.sys = await startSystem({ clusters: 1, provisioners: 1, webhooks: 1 });
  t.context.receiver = await startWebhookReceiver();
});
test.after.always(async (t) => {
  await t.context.receiver?.stop();
  await t.context.sys?.stop();
});

test("a cluster's status changes and plan ends reach its tenant's endpoint in order", async (t) => {
  t.timeout(120_000);
  const { sys, receiver } = t.context;
  const catalog = await createClusterCatalog(sys.baseUrl, {
    workers: 2,
    services: [{ name: "base", actions: { install: "true", start: "true" } }],
  });
  const registered = await api(sys.baseUrl, "POST", "/webhooks", {
    ...catalog.admin,
    body: { url: receiver.url("/life"), events: ["cluster.status", "plan.finished"] },
  });
  t.is(registered.status, 200, registered.text);
  receiver.setSecret("/life", registered.body.secret);

  const id = await createCluster(sys.baseUrl, catalog, 2);
  await waitForStatus(sys.baseUrl, catalog, id, "active", 60_000);
  t.is((await api(sys.baseUrl, "DELETE", `/clusters/${id}`, catalog.admin)).status, 200);
  await waitForStatus(sys.baseUrl, catalog, id, "terminated", 60_000);

  const finished = () => receiver.delivered("/life").filter((r) => r.payload.type === "plan.finished");
  await eventually(() => finished().length === 2, { what: "both plans' ends delivered", timeoutMs: 20_000 });
  await eventually(
    () => receiver.delivered("/life").some((r) => r.payload.type === "cluster.status" && (r.payload.data as ClusterStatusEvent).status === "terminated"),
    { what: "the terminated status delivered", timeoutMs: 20_000 },
  );
  const delivered = receiver.delivered("/life");
  t.true(receiver.requests("/life").every((r) => r.verified && r.payload.tenant === catalog.tenant));
  t.true(delivered.every((r) => (r.payload.data as { clusterId: string }).clusterId === id));
  t.deepEqual(
    finished().map((r) => [(r.payload.data as PlanFinishedEvent).action, (r.payload.data as PlanFinishedEvent).outcome]),
    [
      ["CLUSTER_CREATE", "succeeded"],
      ["CLUSTER_DELETE", "succeeded"],
    ],
  );
  const statuses = delivered.filter((r) => r.payload.type === "cluster.status").map((r) => (r.payload.data as ClusterStatusEvent).status);
  t.true(statuses.includes("active") && statuses.indexOf("active") < statuses.lastIndexOf("terminated"), statuses.join(" "));
  t.is(statuses[statuses.length - 1], "terminated", statuses.join(" "));
  // Each event after the one before it: the ids carry the stream sequence.
  const ids = delivered.map((r) => r.id);
  t.deepEqual(ids, [...ids].sort(), "in the order the events were stored");
});
