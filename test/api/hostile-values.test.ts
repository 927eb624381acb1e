/**
 * Any JSON value in any field of any request body gives an answer below 500: objects whose `toString` or
 * `valueOf` is not a function (which break implicit string conversion), arrays, nested arrays and null, put in
 * place of every field (to depth 3) of a valid body of each endpoint that takes one.
 */
import { api, SUPERADMIN, type Caller } from "../helpers/api.js";
import { createActiveCluster, tenantWithSimCatalog } from "../helpers/clusters.js";
import { KINDS, changed, sample, uniqueName } from "../helpers/catalog.js";
import { testWithSystem } from "../helpers/system-test.js";

const test = testWithSystem({ clusters: 1, provisioners: 1 });

const HOSTILE: Array<[string, unknown]> = [
  ["toString not a function", { toString: "x" }],
  ["valueOf and toString not functions", { valueOf: 1, toString: 1 }],
  ["nested array", [[{ toString: [] }]]],
  ["null", null],
];

/** Every path to a field of `body`, to `depth` levels. */
function fieldPaths(body: unknown, depth = 3, prefix: string[] = []): string[][] {
  if (depth === 0 || typeof body !== "object" || body === null) return [];
  const entries = Array.isArray(body) ? body.map((v, i) => [String(i), v] as const) : Object.entries(body);
  return entries.flatMap(([key, value]) => [[...prefix, key], ...fieldPaths(value, depth - 1, [...prefix, key])]);
}

function replaced(body: unknown, path: string[], value: unknown): unknown {
  const copy = structuredClone(body) as Record<string, unknown>;
  let at: Record<string, unknown> = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string, unknown>;
  at[path[path.length - 1]!] = value;
  return copy;
}

interface Case {
  method: string;
  path: string;
  caller: Caller;
  body: () => unknown;
}

test("every field of every request body, given any JSON value, answers below 500 with a JSON error", async (t) => {
  t.timeout(600_000);
  const { sys } = t.context;
  const tenant = await tenantWithSimCatalog(sys, "hostile");
  const id = await createActiveCluster(sys.baseUrl, tenant.admin, { name: "h", clusterTemplate: "k8s-distributed", numMachines: 3 });
  const cases: Case[] = [
    { method: "POST", path: "/tenants", caller: SUPERADMIN, body: () => ({ tenant: { name: uniqueName("t"), workers: 0, description: "d", maxClusters: 5, maxNodes: 9 }, bootstrap: false }) },
    { method: "PUT", path: `/tenants/${tenant.name}`, caller: SUPERADMIN, body: () => ({ tenant: { name: tenant.name, workers: 3, description: "d" } }) },
    { method: "POST", path: "/import", caller: tenant.admin, body: () => ({ providers: [sample.providers("imp")], services: [sample.services("imps")] }) },
    {
      method: "POST",
      path: "/clusters",
      caller: tenant.admin,
      body: () => ({ name: "c", clusterTemplate: "k8s-distributed", numMachines: 3, description: "d", services: ["base", "etcd", "kube-apiserver"], config: { a: 1 }, initialLeaseDuration: 0 }),
    },
    { method: "POST", path: `/clusters/${id}`, caller: tenant.admin, body: () => ({ expireTime: Date.now() + 60_000 }) },
    { method: "PUT", path: `/clusters/${id}/config`, caller: tenant.admin, body: () => ({ config: { a: 1 }, restart: false, providerFields: { x: "y" } }) },
    { method: "POST", path: `/clusters/${id}/services`, caller: tenant.admin, body: () => ({ services: ["nosuch"], providerFields: { x: "y" } }) },
    { method: "POST", path: "/getNodeProperties", caller: tenant.admin, body: () => ({ clusterId: id, properties: ["hostname"], services: ["kube-apiserver"] }) },
    { method: "DELETE", path: `/clusters/nosuch`, caller: tenant.admin, body: () => ({ providerFields: { x: "y" } }) },
  ];
  for (const kind of KINDS) {
    cases.push(
      { method: "POST", path: `/${kind}`, caller: tenant.admin, body: () => sample[kind](uniqueName("n")) },
      { method: "PUT", path: `/${kind}/existing-${kind}`, caller: tenant.admin, body: () => changed[kind](`existing-${kind}`) },
    );
    await api(sys.baseUrl, "POST", `/${kind}`, { ...tenant.admin, body: sample[kind](`existing-${kind}`) });
  }

  const failures: string[] = [];
  let sent = 0;
  for (const c of cases) {
    const valid = c.body();
    for (const path of [[], ...fieldPaths(valid)]) {
      for (const [what, value] of HOSTILE) {
        const body = path.length ? replaced(valid, path, value) : value;
        const res = await api(sys.baseUrl, c.method, c.path, { ...c.caller, body });
        sent++;
        const isJsonError = res.status < 400 || (typeof res.body === "object" && res.body !== null && "error" in res.body);
        if (res.status >= 500 || !isJsonError) failures.push(`${c.method} ${c.path} ${path.join(".") || "(body)"} = ${what}: ${res.status} ${res.text.slice(0, 200)}`);
      }
    }
  }
  t.log(`${sent} requests`);
  t.deepEqual(failures, []);
});
