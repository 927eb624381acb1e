/**
 * The quickstart's REST client against a running Corral: every call the quickstart makes (import, a script's
 * upload, stage and sync, a sim cluster's create, status and details), named by endpoint, replies as the table types them.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot } from "../src/paths.js";
import { restClient, restPath } from "../src/rest-client.js";
import { createWorkerTenant } from "../../test/helpers/clusters.js";
import { eventually } from "../../test/helpers/eventually.js";
import { testWithSystem } from "../../test/helpers/system-test.js";

const test = testWithSystem({ clusters: 1, provisioners: 1 });

test("restPath fills in the route whose parameters are given, percent-encoded", (t) => {
  t.deepEqual(restPath("clusters.startServices", { id: "7" }), { method: "POST", path: "/clusters/7/services/start" });
  t.deepEqual(restPath("clusters.startServices", { id: "7", service: "a b" }), { method: "POST", path: "/clusters/7/services/a%20b/start" });
  t.deepEqual(restPath("tenancy.import", {}), { method: "POST", path: "/import" });
  t.throws(() => restPath("clusters.get", {}), { message: /no REST route with parameters \(none\)/ });
  t.throws(() => restPath("tenancy.snapshot", {}), { message: /no REST route/ });
});

test("the quickstart's calls by endpoint name: import, upload, stage, sync, a sim cluster to active", async (t) => {
  const { sys } = t.context;
  const tenant = await createWorkerTenant(sys.baseUrl, sys.nc, "quickstart");
  const corral = restClient(sys.baseUrl, { "Service-UserID": "admin", "Service-TenantID": tenant.name });

  t.is((await corral.call("plugins.getType", { params: { type: "providertypes", plugin: "sim" } })).name, "sim");
  const catalog = JSON.parse(await readFile(join(repoRoot, "deploy", "examples", "quickstart-catalog.json"), "utf8"));
  t.is(await corral.call("tenancy.import", { body: catalog }), undefined);

  const script = { type: "automatortypes", plugin: "shell", resourceType: "scripts", resource: "hello.sh" };
  const uploaded = await corral.call("plugins.upload", { params: script, bytes: new TextEncoder().encode("echo hello\n") });
  t.deepEqual(uploaded, { name: "hello.sh", version: 1, status: "inactive" });
  await corral.call("plugins.stage", { params: { ...script, version: String(uploaded.version) } });
  await corral.call("plugins.sync");
  t.deepEqual(await corral.call("plugins.listVersions", { params: script }), [{ name: "hello.sh", version: 1, status: "active" }]);

  const created = await corral.call("clusters.create", { body: { name: "quickstart", clusterTemplate: "webstack", numMachines: 3 } });
  if (!("id" in created)) return t.fail(`create answered ${JSON.stringify(created)}`);
  const status = await eventually(
    async () => {
      const s = await corral.call("clusters.status", { params: { id: created.id } });
      return s.status === "pending" ? false : s;
    },
    { what: `cluster ${created.id} settled`, timeoutMs: 60_000, intervalMs: 200 },
  );
  t.like(status, { clusterid: created.id, status: "active" });
  const cluster = await corral.call("clusters.get", { params: { id: created.id } });
  t.is(cluster.nodes.length, 3);
  t.true(cluster.nodes.every((node) => typeof node.properties["hostname"] === "string"));

  await t.throwsAsync(corral.call("clusters.get", { params: { id: "99999999" } }), { message: /^GET \/clusters\/99999999: HTTP 404 / });
});
