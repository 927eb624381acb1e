/**
 * End to end, with the services and a provisioner logged in as the provisioner NATS user: a `sim` cluster's
 * actions leave files on the provisioner host; deleting the cluster removes its nodes' directories, and deleting
 * the tenant (`DELETE /tenants/{name}`) removes everything the provisioner kept for it.
 */
import { lstat, readdir } from "node:fs/promises";
import { randomUUID } from "node:crypto";
import { tenantDir } from "@corral/provisioner";
import { tenantTmpDir } from "@corral/provisioner/testing";
import { api, SUPERADMIN } from "../../test/helpers/api.js";
import { assertOk } from "../../test/helpers/assertions.js";
import { createClusterCatalog } from "../../test/helpers/cluster-fixture.js";
import { createCluster, waitForAssignment, waitForStatus } from "../../test/helpers/clusters.js";
import { eventually } from "../../test/helpers/eventually.js";
import { testWithSystem } from "../../test/helpers/system-test.js";
import { pluginClient } from "../../test/helpers/plugin-rest.js";

const test = testWithSystem({ clusters: 1, provisioners: 1, requestTimeoutMs: 30_000 });

const exists = (path: string) => lstat(path).then(() => true, () => false);

test("a deleted cluster's node directories and a deleted tenant's whole directory leave the provisioner host", async (t) => {
  const { sys } = t.context;
  const catalog = await createClusterCatalog(sys.baseUrl, {
    workers: 2,
    services: [{ name: "base", actions: { install: 'echo secret > work.txt && echo secret > "$(mktemp)"', start: "true" } }],
  });
  const tenant = catalog.tenant;
  await waitForAssignment(sys.nc, tenant);
  assertOk(t, await pluginClient(sys.baseUrl, catalog.admin).upload("/plugins/automatortypes/shell/scripts/tool.sh", "echo tool"), "upload a script");
  const id = await createCluster(sys.baseUrl, catalog.admin, { name: `c${randomUUID().slice(0, 6)}`, clusterTemplate: catalog.template, numMachines: 2 });
  await waitForStatus(sys.baseUrl, catalog.admin, id, "active", 60_000);
  const clusterDir = `${tenantDir(sys.workDir, tenant)}/nodes/${id}`;
  t.is((await readdir(clusterDir)).length, 2, "each node's actions left a directory");
  t.true((await readdir(tenantTmpDir(sys.workDir, tenant))).length > 0, "and a temporary file");

  assertOk(t, await api(sys.baseUrl, "DELETE", `/clusters/${id}`, catalog.admin), "delete the cluster");
  await waitForStatus(sys.baseUrl, catalog.admin, id, "terminated", 60_000);
  t.false(await exists(clusterDir), "the nodes' DELETE removed their directories");

  assertOk(t, await api(sys.baseUrl, "PUT", `/tenants/${tenant}`, { ...SUPERADMIN, body: { tenant: { name: tenant, workers: 0 } } }), "workers 0");
  assertOk(t, await api(sys.baseUrl, "DELETE", `/tenants/${tenant}`, SUPERADMIN), "delete the tenant");
  await eventually(async () => !(await exists(tenantDir(sys.workDir, tenant))), { what: "the tenant's directory removed", timeoutMs: 20_000 });
});
