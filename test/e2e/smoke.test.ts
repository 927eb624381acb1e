import { ASSIGNMENT_KEY, buckets, encode } from "@corral/contracts";
import { openBucket } from "@corral/shared";
import { api, SUPERADMIN } from "../helpers/api.js";
import { eventually } from "../helpers/eventually.js";
import { testWithSystem } from "../helpers/system-test.js";

const test = testWithSystem({ clusters: 1, provisioners: 1, reconcileIntervalMs: 500 });

test("e2e - a small cluster is created, reaches active, and is deleted", async (t) => {
  const { sys } = t.context;
  const base = sys.baseUrl;
  const admin = { user: "admin", tenant: "acme" };
  t.is((await api(base, "POST", "/tenants", { ...SUPERADMIN, body: { tenant: { name: "acme", workers: 4 } } })).status, 200);
  const assignments = await openBucket(sys.nc, buckets.assignments);
  await assignments.put(ASSIGNMENT_KEY, encode({ "test-p0": { acme: 4 } }));
  const shell = (script: string) => ({ type: "shell", fields: { script } });
  const entities: Array<[string, unknown]> = [
    ["/providers", { name: "sim1", providertype: "sim", provisioner: {} }],
    ["/hardwaretypes", { name: "small", providermap: { sim1: { flavor: "s1" } } }],
    ["/imagetypes", { name: "img", providermap: { sim1: { image: "i1" } } }],
    ["/services", { name: "a", provisioner: { actions: { install: shell("echo a"), start: shell("echo start a") } } }],
    [
      "/services",
      {
        name: "b",
        dependencies: { runtime: { requires: ["a"] } },
        provisioner: { actions: { install: shell("echo b"), configure: shell("echo conf b") } },
      },
    ],
    [
      "/clustertemplates",
      {
        name: "t1",
        compatibility: { services: ["a", "b"], hardwaretypes: ["small"], imagetypes: ["img"] },
        defaults: { services: ["a", "b"], provider: "sim1", hardwaretype: "small", imagetype: "img", config: { host: "%host.service.a%" } },
      },
    ],
  ];
  for (const [path, body] of entities) {
    const r = await api(base, "POST", path, { ...admin, body });
    t.is(r.status, 200, `${path}: ${r.text}`);
  }
  const created = await api(base, "POST", "/clusters", { ...admin, body: { name: "c1", clusterTemplate: "t1", numMachines: 3 } });
  t.is(created.status, 200, created.text);
  const id = created.body.id as string;
  const active = await eventually(
    async () => {
      const r = await api(base, "GET", `/clusters/${id}/status`, admin);
      return r.body.status === "active" ? r.body : r.body.status === "pending" ? false : Promise.reject(new Error(r.text));
    },
    { timeoutMs: 30000, what: "cluster active" },
  );
  t.is(active.actionstatus, "complete");
  t.is(active.stepscompleted, active.stepstotal);
  const details = await api(base, "GET", `/clusters/${id}`, admin);
  t.is(details.body.nodes.length, 3);
  for (const node of details.body.nodes) t.truthy(node.properties.ipaddresses.bind_v4);

  t.is((await api(base, "DELETE", `/clusters/${id}`, admin)).status, 200);
  await eventually(async () => (await api(base, "GET", `/clusters/${id}/status`, admin)).body.status === "terminated", {
    timeoutMs: 30000,
    what: "cluster terminated",
  });
  t.pass();
});
