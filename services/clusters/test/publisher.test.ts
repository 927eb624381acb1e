/**
 * The publisher (src/adapters/publisher.ts) on a real nats-server: a retry's `task.started` reaches the server
 * before the task itself, so no result of the task (and no end announced from it) can be stored before its start.
 */
import type { Msg } from "@nats-io/transport-node";
import { TaskName, type TaskMessage } from "@corral/contracts";
import { ensureStreams } from "@corral/shared";
import { createPublisher } from "../src/adapters/publisher.js";
import { testWithNats } from "../../../test/helpers/nats-test.js";

const test = testWithNats("clusters-publisher-test", (nc) => ensureStreams(nc));

test("publishTasks announces a retry's start before the server gets the task", async (t) => {
  const seen: string[] = [];
  const sub = t.context.nc.subscribe("corral.>", { callback: (_err: unknown, m: Msg) => void seen.push(m.subject) });
  t.teardown(() => sub.unsubscribe());
  const retry: TaskMessage = {
    tenant: "acme",
    clusterId: "c1",
    planId: "c1-001",
    taskId: "c1-001-004",
    dispatch: 2,
    taskName: TaskName.Install,
    nodeId: "c1-n1",
    submitTime: 1,
    config: {
      hostname: "n1",
      ipaddresses: {},
      nodenum: 1000,
      hardwaretype: "small",
      imagetype: "debian",
      services: [],
      automators: [],
      cluster: {},
      provider: { name: "p", providertype: "sim", provisioner: {} },
      results: {},
    },
  };
  await createPublisher(t.context.nc).publishTasks([retry]);
  await t.context.nc.flush();
  const relevant = seen.filter((s) => s.startsWith("corral.events.") || s.startsWith("corral.tasks."));
  t.deepEqual(relevant, ["corral.events.acme.cluster.c1.task.started", "corral.tasks.acme"]);
});
