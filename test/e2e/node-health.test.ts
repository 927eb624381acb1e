/**
 * Node health end to end (docs/providers.md, Node health), with every process on its own NATS user: the provisioner
 * checking the tenant reports its `sim` nodes (provider field `health_check`), the clusters service keeps each
 * node's `health`, `GET /v2/clusters/{id}` shows it and a `node.health` event of each node is on the cluster's
 * stream. Machines that vanish are the provider tests' (`sim` machines never do).
 */
import { clusterEventFilter, type NodeHealthEvent, type NodeView } from "@corral/contracts";
import { api } from "../helpers/api.js";
import { createCluster, createClusterCatalog, waitForStatus } from "../helpers/cluster-fixture.js";
import { readEvents, waitForAssignment } from "../helpers/clusters.js";
import { eventually } from "../helpers/eventually.js";
import { testWithSystem } from "../helpers/system-test.js";

const INTERVAL_MS = 300;
const test = testWithSystem({ clusters: 1, provisioners: 1, healthIntervalMs: INTERVAL_MS });

test("node health - a checked cluster's nodes show health through the API and as node.health events", async (t) => {
  const { sys } = t.context;
  const catalog = await createClusterCatalog(sys.baseUrl, {
    workers: 2,
    sim: { health_check: "true" },
    services: [{ name: "base", actions: { install: "true", start: "true" } }],
  });
  await waitForAssignment(sys.nc, catalog.tenant);
  const id = await createCluster(sys.baseUrl, catalog, 2);
  await waitForStatus(sys.baseUrl, catalog, id, "active", 30_000);

  const nodes = await eventually(
    async () => {
      const res = await api(sys.baseUrl, "GET", `/clusters/${id}`, catalog.admin);
      const found = (res.body as { nodes: NodeView[] }).nodes;
      return found.length === 2 && found.every((n) => n.health?.state === "healthy") ? found : false;
    },
    { what: "both nodes healthy in the cluster's full form", timeoutMs: 15_000 },
  );
  for (const node of nodes) {
    t.like(node.health, { state: "healthy", message: "sim: the simulated machine answers" });
    t.true(node.health!.since <= node.health!.checkedAt);
  }
  const events = await eventually(
    async () => {
      const found = (await readEvents<NodeHealthEvent>(sys.nc, clusterEventFilter(catalog.tenant, id))).map((e) => e.data).filter((e) => e.type === "node.health");
      return found.length >= 2 ? found : false;
    },
    { what: "the node.health events" },
  );
  t.deepEqual(events.map((e) => e.nodeId).sort(), nodes.map((n) => n.id).sort(), "one event per node: a first finding, then nothing while nothing changes");
  t.true(events.every((e) => e.state === "healthy" && e.previous === undefined));
});
