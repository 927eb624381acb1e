/** A service name that exists nowhere is reported as missing, not as incompatible with the template. */
import { api } from "../helpers/api.js";
import { assertError } from "../helpers/assertions.js";
import { createActiveCluster, tenantWithSimCatalog } from "../helpers/clusters.js";
import { testWithSystem } from "../helpers/system-test.js";

const test = testWithSystem({ clusters: 1, provisioners: 1 });

test("unknown services - create and add-services say the service does not exist", async (t) => {
  const { sys } = t.context;
  const tenant = await tenantWithSimCatalog(sys, "unknown-svc");
  const created = await api(sys.baseUrl, "POST", "/clusters", {
    ...tenant.admin,
    body: { name: "u", clusterTemplate: "k8s-distributed", numMachines: 3, services: ["base", "no-such-service"] },
  });
  assertError(t, created, 400, "create with an unknown service");
  t.is((created.body as { message: string }).message, "service no-such-service does not exist");

  const id = await createActiveCluster(sys.baseUrl, tenant.admin, { name: "k", clusterTemplate: "k8s-distributed", numMachines: 3 });
  const added = await api(sys.baseUrl, "POST", `/clusters/${id}/services`, { ...tenant.admin, body: { services: ["no-such-service"] } });
  assertError(t, added, 400, "add an unknown service");
  t.is((added.body as { message: string }).message, "service no-such-service does not exist");
  const incompatible = await api(sys.baseUrl, "POST", `/clusters/${id}/services`, { ...tenant.admin, body: { services: ["nginx"] } });
  assertError(t, incompatible, 400, "add an existing service the template does not allow");
  t.regex((incompatible.body as { message: string }).message, /service nginx is not compatible with template k8s-distributed/);
});
