/**
 * Query parameters come from the endpoint table (RestBinding.query): the gateway forwards the ones a row declares
 * and leaves out any other, which the API accepts and ignores as it always did.
 */
import { decode, endpointList, subjects, type ApiRequest } from "@corral/contracts";
import { api, SUPERADMIN } from "../helpers/api.js";
import { testWithSystem, type SystemTest } from "../helpers/system-test.js";

const test = testWithSystem({ clusters: 1, metrics: 1 });

/**
 * The query the service gets for `GET path`, seen by a subscriber beside the service's queue group (serial tests:
 * no other request to the subject meanwhile).
 */
async function forwardedQuery(t: SystemTest, subject: string, path: string) {
  const { sys } = t.context;
  const seen = new Promise<ApiRequest>((resolve) => {
    const sub = sys.nc.subscribe(subject, { max: 1, callback: (_err, msg) => resolve(decode<ApiRequest>(msg.data)) });
    t.teardown(() => sub.unsubscribe());
  });
  await sys.nc.flush();
  const res = await api(sys.baseUrl, "GET", path, SUPERADMIN);
  return { status: res.status, body: res.body, query: (await seen).query };
}

test.serial("the gateway forwards the declared query parameters only; unknown ones are ignored", async (t) => {
  const listed = await forwardedQuery(t, subjects.clusters.list, "/clusters?status=active&bogus=1&constructor=x&status=terminated");
  t.is(listed.status, 200);
  t.deepEqual(listed.query, { status: "terminated" }, "a repeated parameter keeps its last value");

  const usage = await forwardedQuery(t, subjects.metrics.nodeUsage, "/metrics/nodes/usage?start=0&end=10&user=u&tenant=superadmin&page=2");
  t.is(usage.status, 200);
  t.deepEqual(usage.query, { start: "0", end: "10", user: "u", tenant: "superadmin" });

  const tenants = await forwardedQuery(t, subjects.tenancy.tenants.list, "/tenants?status=active&limit=5");
  t.is(tenants.status, 200);
  t.deepEqual(tenants.query, {}, "an endpoint that reads no query gets none");
});

test.serial("an unknown query parameter changes no answer", async (t) => {
  const { baseUrl } = t.context.sys;
  for (const path of ["/clusters", "/tenants/superadmin", "/metrics/nodes/usage?end=100"]) {
    const plain = await api(baseUrl, "GET", path, SUPERADMIN);
    const extra = await api(baseUrl, "GET", `${path}${path.includes("?") ? "&" : "?"}unknown=1&dryRun=true`, SUPERADMIN);
    t.is(plain.status, 200, path);
    t.deepEqual(extra.body, plain.body, path);
  }
  t.is((await api(baseUrl, "GET", "/clusters?status=running", SUPERADMIN)).status, 400, "a declared one is still checked");
});

test("every query parameter the table declares is described, and dryRun is declared exactly with a dry-run reply", (t) => {
  for (const { name, endpoint } of endpointList()) {
    const rest = endpoint.rest;
    if (!rest) continue;
    for (const [param, { description, schema }] of Object.entries(rest.query)) {
      t.true(description.length > 0 && Object.keys(schema).length > 0, `${name} ?${param}`);
    }
    t.is("dryRun" in rest.query, rest.dryRunReply !== undefined, name);
  }
});
