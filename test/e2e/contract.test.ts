/**
 * The API description (`GET /v2/openapi.json`, derived from the endpoint table) says what the services really
 * answer: one walk through every REST endpoint of a running Corral (tenants, provisioners, each catalog kind,
 * hostpool hosts, export/import, a sim cluster through every cluster operation, plugin resources, metrics, the
 * description and its docs), each answer checked against the schema the description gives for its route and
 * status; refused calls too (their status must be one the description lists, their body the JSON error body).
 */
import { buckets, CATALOG_KINDS, encode, endpointList, type EndpointName } from "@corral/contracts";
import { hostAllocationKey, openBucket } from "@corral/shared";
import { apiRoutes, createRouter } from "@corral/gateway/testing";
import { upload } from "../helpers/plugin-rest.js";
import { api, SUPERADMIN, type ApiResponse, type Caller } from "../helpers/api.js";
import { loadApiDescription, type ApiDescription } from "../helpers/api-description.js";
import { uniqueName } from "../helpers/catalog.js";
import { simFixtureCatalog, waitForAssignment, waitForStatus } from "../helpers/clusters.js";
import { testWithSystem, type SystemTest } from "../helpers/system-test.js";

const test = testWithSystem({ clusters: 1, provisioners: 1, metrics: 1, webhooks: 1, reconcileIntervalMs: 500 });

const route = createRouter(apiRoutes());

/** Calls the API and checks each answer against what the API description says of its route and status. */
function contractClient(t: SystemTest, description: ApiDescription) {
  const covered = new Set<EndpointName>();
  const check = (method: string, path: string, res: ApiResponse, status = 200): ApiResponse => {
    if (res.status !== status) throw new Error(`${method} ${path}: HTTP ${res.status} ${res.text}, not ${status}`);
    const match = route(method, path.split("?")[0] ?? path);
    if (match.kind !== "found") throw new Error(`${method} ${path} matches no route`);
    const name = match.route.endpoint;
    t.deepEqual(description.answerProblems(method, match.route.pattern, res), [], `${method} ${path} (${name}): HTTP ${res.status}`);
    if (status === 200) covered.add(name);
    return res;
  };
  const send = (caller: Caller, method: string, path: string, body?: unknown) =>
    api(t.context.sys.baseUrl, method, path, { ...caller, ...(body !== undefined ? { body } : {}) });
  return {
    covered,
    call: async (caller: Caller, method: string, path: string, body?: unknown) => check(method, path, await send(caller, method, path, body)),
    /** A call that must be refused with `status`. */
    refused: async (caller: Caller, method: string, path: string, status: number, body?: unknown) =>
      check(method, path, await send(caller, method, path, body), status),
    upload: async (caller: Caller, path: string, bytes: string) => check("POST", path, await upload(t.context.sys.baseUrl, caller, path, bytes)),
  };
}

test("every REST endpoint answers what the API description says, refusals too", async (t) => {
  const { sys } = t.context;
  const description = await loadApiDescription(sys.baseUrl);
  const { call, refused, upload: uploadChecked, covered } = contractClient(t, description);
  const settled = (caller: Caller, id: string) => waitForStatus(sys.baseUrl, caller, id, "active");

  await call({}, "GET", "/status");
  await call({}, "GET", "/openapi.json");
  await call({}, "GET", "/docs");
  await call({}, "GET", "/docs/init.js");
  await refused({}, "GET", "/docs/nothing.js", 404);
  await refused({}, "GET", "/clusters", 401);

  // Tenants and provisioners.
  const name = uniqueName("contract");
  await call(SUPERADMIN, "POST", "/tenants", { tenant: { name, workers: 3, description: "contract" } });
  await waitForAssignment(sys.nc, name);
  await call(SUPERADMIN, "PUT", `/tenants/${name}`, { tenant: { name, workers: 3, maxClusters: 10 } });
  await call(SUPERADMIN, "GET", `/tenants/${name}`);
  await call(SUPERADMIN, "GET", "/tenants");
  const provisioners = (await call(SUPERADMIN, "GET", "/provisioners")).body as Array<{ id: string }>;
  await call(SUPERADMIN, "GET", `/provisioners/${provisioners[0]?.id}`);
  const admin = { user: "admin", tenant: name };
  const user = { user: "alice", tenant: name };
  await refused(SUPERADMIN, "POST", "/tenants", 409, { tenant: { name, workers: 3 } });
  await refused(user, "GET", "/tenants", 401);
  await refused(user, "POST", "/import", 403, {});
  await refused(user, "GET", "/clusters/00000000", 404);
  await refused(user, "POST", "/clusters", 400, { name: "no-template" });
  const plainGet = await api(sys.baseUrl, "GET", "/events", user);
  t.is(plainGet.status, 426, "the WebSocket's path without an upgrade");
  t.deepEqual(description.answerProblems("GET", "/events", plainGet), [], "a 426 the description lists");

  // The catalog: import, then each kind's five operations on a copy of an imported entity.
  await call(admin, "POST", "/import", simFixtureCatalog());
  await call(user, "GET", "/export");
  for (const kind of CATALOG_KINDS) {
    const [first] = (await call(user, "GET", `/${kind}`)).body as Array<Record<string, unknown>>;
    const copy = `${String(first?.["name"])}-copy`;
    await call(admin, "POST", `/${kind}`, { ...first, name: copy });
    await call(user, "GET", `/${kind}/${copy}`);
    await call(admin, "PUT", `/${kind}/${copy}`, { ...first, name: copy, description: "changed" });
    await call(admin, "DELETE", `/${kind}/${copy}`);
  }

  // Hostpool hosts: one listed free, one quarantined as a provisioner would record it.
  await call(admin, "POST", "/providers", { name: "pool", providertype: "hostpool", provisioner: { hosts: "10.9.0.1, 10.9.0.2", ssh_password: "pw" } });
  const allocations = await openBucket(sys.nc, buckets.hostPool);
  const quarantined = { host: "10.9.0.2:22", state: "quarantined", clusterId: "00000009", nodeId: "n9", since: 1000, reason: "r" };
  await allocations.put(hostAllocationKey(name, "pool", quarantined.host), encode(quarantined));
  await call(admin, "GET", "/providers/pool/hosts");
  await call(admin, "DELETE", `/providers/pool/hosts/${quarantined.host}/quarantine`);

  // A cluster through every operation.
  const { id } = (await call(user, "POST", "/clusters", { name: "contract", clusterTemplate: "webapp", numMachines: 1, initialLeaseDuration: 3_600_000 })).body as { id: string };
  await settled(user, id);
  await call(user, "GET", "/clusters");
  await call(user, "GET", `/clusters/${id}`);
  await call(user, "GET", `/clusters/${id}/status`);
  const plans = (await call(user, "GET", `/clusters/${id}/plans`)).body as Array<{ id: string }>;
  await call(user, "GET", `/clusters/${id}/plans/${plans[0]?.id}`);
  await call(user, "GET", `/clusters/${id}/config`);
  await call(user, "GET", `/clusters/${id}/services`);
  await call(user, "POST", "/getNodeProperties", { clusterId: id });
  // Dry runs answer what the description gives for `?dryRun=true` (beside the real call's answer in the same 200).
  const dryCreate = await call(user, "POST", "/clusters?dryRun=true", { name: "contract-dry", clusterTemplate: "webapp", numMachines: 1 });
  const dryRestart = await call(user, "POST", `/clusters/${id}/services/restart?dryRun=true`);
  const dryRunFlag = (res: ApiResponse) => (res.body as { dryRun?: boolean } | undefined)?.dryRun;
  t.deepEqual([dryRunFlag(dryCreate), dryRunFlag(dryRestart)], [true, true], "both answered a dry run");
  await call(user, "POST", `/clusters/${id}`, { expireTime: Date.now() + 7_200_000 });
  for (const [method, path, body] of [
    ["PUT", `/clusters/${id}/config`, { config: { a: 1 }, restart: false }],
    ["POST", `/clusters/${id}/services`, { services: ["redis"] }],
    ["POST", `/clusters/${id}/services/stop`, undefined],
    ["POST", `/clusters/${id}/services/start`, undefined],
    ["POST", `/clusters/${id}/services/nginx/restart`, undefined],
  ] as const) {
    await call(user, method, path, body);
    await settled(user, id);
  }
  // Day two: grow by two, remove them one by one and as a list, then replace the original node.
  const nodeIds = async () => ((await call(user, "GET", `/clusters/${id}`)).body as { nodes: Array<{ id: string }> }).nodes.map((n) => n.id);
  const original = await nodeIds();
  await call(user, "POST", `/clusters/${id}/nodes`, { numMachines: 2 });
  await settled(user, id);
  const added = (await nodeIds()).filter((node) => !original.includes(node));
  t.is(added.length, 2, "two nodes added");
  await call(user, "DELETE", `/clusters/${id}/nodes/${added[0]}`);
  await settled(user, id);
  await call(user, "POST", `/clusters/${id}/nodes/remove`, { nodes: [added[1]] });
  await settled(user, id);
  t.deepEqual(await nodeIds(), original, "back to the original node");
  await call(user, "POST", `/clusters/${id}/nodes/${original[0]}/replace`);
  await settled(user, id);
  const replaced = await nodeIds();
  t.is(replaced.length, original.length, "a replacement keeps the node count");
  t.false(replaced.includes(original[0]!), "the replaced node is gone");
  await call(user, "GET", `/clusters/${id}`);
  await call(user, "GET", `/clusters/${id}/plans`);
  await call(user, "DELETE", `/clusters/${id}`);
  await waitForStatus(sys.baseUrl, user, id, "terminated");
  await call(user, "GET", `/clusters/${id}`);

  // Plugin types and resources.
  await call(user, "GET", "/plugins/automatortypes");
  await call(user, "GET", "/plugins/providertypes/sim");
  const tool = "/plugins/automatortypes/shell/scripts/tool.sh";
  await uploadChecked(admin, tool, "echo v1");
  await uploadChecked(admin, tool, "echo v2");
  await call(admin, "GET", "/plugins/automatortypes/shell/scripts");
  await call(admin, "POST", `${tool}/versions/1/stage`);
  await call(admin, "POST", "/plugins/sync");
  await call(admin, "GET", `${tool}?status=active`);
  await call(admin, "POST", `${tool}/versions/1/recall`);
  await call(admin, "POST", "/plugins/sync");
  await call(admin, "DELETE", `${tool}/versions/2`);
  await call(admin, "DELETE", tool);

  // Metrics.
  await call(admin, "GET", "/metrics/queues");
  await call(user, "GET", "/metrics/nodes/usage");
  await call(admin, "GET", "/audit?limit=5");

  // Webhooks (nothing listens on port 9: deliveries fail, which the answers describe too).
  const hook = (await call(admin, "POST", "/webhooks", { url: "http://127.0.0.1:9/contract", events: ["audit"], description: "contract" })).body as { id: string };
  await call(admin, "GET", "/webhooks");
  await call(admin, "GET", `/webhooks/${hook.id}`);
  await call(admin, "PUT", `/webhooks/${hook.id}`, { events: ["audit", "cluster.status"] });
  await call(admin, "POST", `/webhooks/${hook.id}/test`);
  await call(admin, "GET", `/webhooks/${hook.id}/deliveries`);
  await refused(user, "GET", "/webhooks", 401);
  await call(admin, "DELETE", `/webhooks/${hook.id}`);
  await refused(admin, "GET", `/webhooks/${hook.id}`, 404);

  // A tenant without clusters is deleted.
  const gone = uniqueName("contract-gone");
  await call(SUPERADMIN, "POST", "/tenants", { tenant: { name: gone, workers: 0 } });
  await call(SUPERADMIN, "DELETE", `/tenants/${gone}`);

  const rest = endpointList().filter(({ endpoint }) => endpoint.rest !== undefined).map(({ name }) => name);
  t.deepEqual(rest.filter((name) => !covered.has(name)), [], "every REST endpoint was called");
});
