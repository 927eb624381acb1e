/**
 * Requests as the endpoint table declares them, checked and decoded as serveEndpoints does before a handler runs:
 * the rules (numMachines >= 1 and at most MAX_CLUSTER_SIZE, numeric strings, DNS suffixes, ...) and the messages
 * naming the field.
 */
import test from "ava";
import { endpoints, MAX_CLUSTER_SIZE, requestValidator, type ApiRequest, type EndpointName } from "@corral/contracts";
import { throws400 } from "./helpers.js";

const identity = { userId: "u", tenant: "acme", role: "user" } as const;

/** The request `name`'s handler gets for an envelope of `parts`. */
function decoded(name: EndpointName, parts: Partial<ApiRequest>): ApiRequest {
  const validate = requestValidator(endpoints[name]);
  return validate({ identity, params: {}, query: {}, ...parts }) as ApiRequest;
}

const createBody = (fields: Record<string, unknown>) =>
  decoded("clusters.create", { body: { name: "c1", clusterTemplate: "web", numMachines: 2, ...fields } }).body as Record<string, unknown>;
const refusedCreate = (t: Parameters<typeof throws400>[0], fields: Record<string, unknown>, message: string, field: string) =>
  throws400(t, () => createBody(fields), message, field);

test("clusters.create - the declared fields, decoded: numeric strings as numbers, null and empty as not given, unknown keys left out", (t) => {
  t.deepEqual(createBody({}), { name: "c1", clusterTemplate: "web", numMachines: 2 });
  t.deepEqual(createBody({ numMachines: "3", initialLeaseDuration: "60000" }), {
    name: "c1",
    clusterTemplate: "web",
    numMachines: 3,
    initialLeaseDuration: 60000,
  });
  t.deepEqual(createBody({ description: null, provider: null, services: null, dnsSuffix: "", config: null, providerFields: null, bogus: 1 }), {
    name: "c1",
    clusterTemplate: "web",
    numMachines: 2,
  });
  t.deepEqual(createBody({ dnsSuffix: ".corp.example.com", services: ["base", "nginx"], config: { a: { b: 1 } }, providerFields: { pw: "x" } }), {
    name: "c1",
    clusterTemplate: "web",
    numMachines: 2,
    services: ["base", "nginx"],
    dnsSuffix: ".corp.example.com",
    config: { a: { b: 1 } },
    providerFields: { pw: "x" },
  });
});

test("clusters.create - numMachines is an integer from 1 to MAX_CLUSTER_SIZE, as a number or its digits", (t) => {
  t.is(createBody({ numMachines: MAX_CLUSTER_SIZE }).numMachines, MAX_CLUSTER_SIZE);
  refusedCreate(t, { numMachines: 0 }, "numMachines must be >= 1 (got 0)", "numMachines");
  refusedCreate(t, { numMachines: -2 }, "numMachines must be >= 1 (got -2)", "numMachines");
  refusedCreate(t, { numMachines: "0" }, "numMachines must be >= 1 (got 0)", "numMachines");
  refusedCreate(t, { numMachines: MAX_CLUSTER_SIZE + 1 }, `numMachines must be at most ${MAX_CLUSTER_SIZE} (got ${MAX_CLUSTER_SIZE + 1})`, "numMachines");
  refusedCreate(t, { numMachines: "20000" }, `numMachines must be at most ${MAX_CLUSTER_SIZE} (got 20000)`, "numMachines");
  refusedCreate(t, { numMachines: 1e12 }, `numMachines must be at most ${MAX_CLUSTER_SIZE} (got 1000000000000)`, "numMachines");
  refusedCreate(t, { numMachines: "three" }, `numMachines must be an integer (got "three")`, "numMachines");
  refusedCreate(t, { numMachines: 1.5 }, "numMachines must be an integer (got 1.5)", "numMachines");
  refusedCreate(t, { numMachines: [2] }, "numMachines must be an integer (got an array)", "numMachines");
  refusedCreate(t, { numMachines: null }, "numMachines must be an integer (got null)", "numMachines");
  refusedCreate(t, { numMachines: undefined }, "numMachines is required", "numMachines");
});

test("clusters.create - every other field's rule, named in the message", (t) => {
  throws400(t, () => decoded("clusters.create", { body: [1] }), "body must be a JSON object", "body");
  refusedCreate(t, { name: undefined }, "name is required", "name");
  refusedCreate(t, { name: 5 }, "name must be a string (got 5)", "name");
  refusedCreate(t, { name: "no spaces" }, `name must contain only letters, digits, '.', '_' and '-' (got "no spaces")`, "name");
  refusedCreate(t, { name: "n".repeat(256) }, "name must be at most 255 characters (got 256)", "name");
  refusedCreate(t, { clusterTemplate: "" }, "clusterTemplate must not be empty", "clusterTemplate");
  refusedCreate(t, { description: 5 }, "description must be a string (got 5)", "description");
  refusedCreate(t, { services: "base" }, `services must be an array of names (got "base")`, "services");
  refusedCreate(t, { services: ["base", 7] }, "services[1] must be a string (got 7)", "services[1]");
  refusedCreate(t, { initialLeaseDuration: -1 }, "initialLeaseDuration must be >= 0 (got -1)", "initialLeaseDuration");
  refusedCreate(t, { initialLeaseDuration: "long" }, `initialLeaseDuration must be an integer (got "long")`, "initialLeaseDuration");
  refusedCreate(t, { dnsSuffix: "not a suffix!" }, `dnsSuffix must be a DNS suffix such as "example.com" (got "not a suffix!")`, "dnsSuffix");
  refusedCreate(t, { dnsSuffix: "-bad.example" }, `dnsSuffix must be a DNS suffix such as "example.com" (got "-bad.example")`, "dnsSuffix");
  refusedCreate(t, { config: "x" }, `config must be an object (got "x")`, "config");
  refusedCreate(t, { config: [1] }, "config must be an object (got an array)", "config");
  refusedCreate(t, { providerFields: "pw" }, `providerFields must be an object (got "pw")`, "providerFields");
  refusedCreate(t, { config: { a: [1, -Infinity] } }, "config.a[1] must be a finite number (got -Infinity)", "config.a[1]");
  const deep = JSON.parse(`${'{"a":'.repeat(70)}1${"}".repeat(70)}`) as unknown;
  refusedCreate(t, { config: deep }, `config${".a".repeat(64)} is nested too deeply (at most 64 levels)`, `config${".a".repeat(64)}`);
});

test("clusters job bodies - provider fields only, services at least one and without repeats, config required", (t) => {
  const params = { id: "00000001" };
  t.is(decoded("clusters.delete", { params }).body, undefined, "no body: none");
  t.is(decoded("clusters.delete", { params, body: null }).body, undefined, "a null body: none");
  t.deepEqual(decoded("clusters.stopServices", { params, body: { providerFields: { pw: "x" } } }).body, { providerFields: { pw: "x" } });
  throws400(t, () => decoded("clusters.delete", { params, body: "x" }), "body must be a JSON object", "body");
  t.deepEqual(decoded("clusters.addServices", { params, body: { services: ["a", "b", "a"] } }).body, { services: ["a", "b"] });
  throws400(t, () => decoded("clusters.addServices", { params, body: { services: [] } }), "services must not be empty", "services");
  throws400(t, () => decoded("clusters.putConfig", { params, body: { restart: false } }), "config is required", "config");
  t.deepEqual(decoded("clusters.putConfig", { params, body: { config: {}, restart: "false" } }).body, { config: {}, restart: false });
  throws400(t, () => decoded("clusters.putConfig", { params, body: { config: {}, restart: "yes" } }), `restart must be a boolean (got "yes")`, "restart");
  t.deepEqual(decoded("clusters.extendLease", { params, body: { expireTime: "1700000000000" } }).body, { expireTime: 1700000000000 });
  throws400(t, () => decoded("clusters.extendLease", { params: {}, body: { expireTime: 1 } }), "id is required", "id");
  throws400(t, () => decoded("clusters.nodeProperties", { body: { clusterId: "" } }), "clusterId must not be empty", "clusterId");
});

test("query parameters - read from text by their declaration: booleans, comma-separated lists in any case", (t) => {
  t.deepEqual(decoded("clusters.create", { body: { name: "c", clusterTemplate: "t", numMachines: 1 }, query: { dryRun: "true" } }).query, { dryRun: true });
  t.deepEqual(decoded("clusters.delete", { params: { id: "1" }, query: { dryRun: "false" } }).query, { dryRun: false });
  throws400(t, () => decoded("clusters.delete", { params: { id: "1" }, query: { dryRun: "maybe" } }), `dryRun must be a boolean (got "maybe")`, "dryRun");
  t.deepEqual(decoded("clusters.list", { query: { status: " Active,terminated ," } }).query, { status: ["active", "terminated"] });
  t.deepEqual(decoded("clusters.list", { query: { status: "" } }).query, { status: [] });
  t.deepEqual(decoded("clusters.list", { query: {} }).query, {});
  throws400(
    t,
    () => decoded("clusters.list", { query: { status: "active,running" } }),
    `status must be one of pending, active, incomplete, inconsistent, terminated (any case) (got "running")`,
    "status",
  );
  t.deepEqual(decoded("plugins.listVersions", { params: { type: "automatortypes", plugin: "shell", resourceType: "scripts", resource: "a" }, query: { status: "STAGED" } }).query, {
    status: "staged",
  });
});

test("path parameters - names, plugin types, version numbers, reserved resource names", (t) => {
  const resource = { type: "automatortypes", plugin: "shell", resourceType: "scripts", resource: "a.sh" };
  t.deepEqual(decoded("plugins.stage", { params: { ...resource, version: "3" } }).params, { ...resource, version: 3 });
  throws400(t, () => decoded("plugins.stage", { params: { ...resource, version: "0" } }), "version must be >= 1 (got 0)", "version");
  throws400(t, () => decoded("plugins.stage", { params: { ...resource, version: "x" } }), `version must be an integer (got "x")`, "version");
  throws400(t, () => decoded("plugins.listTypes", { params: { type: "foo" } }), `type must be one of automatortypes, providertypes (got "foo")`, "type");
  throws400(t, () => decoded("plugins.deleteResource", { params: { ...resource, resource: ".." } }), "resource name .. is reserved", "resource");
  throws400(t, () => decoded("tenancy.tenants.get", { params: { id: "a b" } }), `id must contain only letters, digits, '.', '_' and '-' (got "a b")`, "id");
  throws400(t, () => decoded("tenancy.provisioners.get", { params: { id: "" } }), "id must not be empty", "id");
});

test("internal requests - checked like any other: a purge names a tenant", (t) => {
  const purge = requestValidator(endpoints["clusters.purgeTenant"]);
  t.deepEqual(purge({ tenant: "acme" }), { tenant: "acme" });
  throws400(t, () => purge({}), "tenant is required", "tenant");
  throws400(t, () => purge({ tenant: "a/b" }), `tenant must contain only letters, digits, '.', '_' and '-' (got "a/b")`, "tenant");
});
