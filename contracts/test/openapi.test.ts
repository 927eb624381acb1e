/** The OpenAPI description generated from the endpoint table (contracts/src/endpoints/openapi.ts), without a server. */
import test from "ava";
import { endpointList, openApiDocument, openApiPath, type DocMethod, type DocOperation } from "@corral/contracts";

const doc = openApiDocument({ basePath: "/v2", version: "1.2.3" });
const operation = (method: "get" | "post" | "put" | "delete", path: string): DocOperation => {
  const op = doc.paths[path]?.[method];
  if (!op) throw new Error(`${method} ${path} is not described`);
  return op;
};
const statuses = (op: DocOperation) => Object.keys(op.responses);

test("openapi - each route lists the errors it can give: validation, identity and role, a named entity, a change, a body, a service", (t) => {
  t.deepEqual(statuses(operation("post", "/clusters")), ["200", "400", "401", "409", "413", "500", "503", "504"]);
  t.deepEqual(operation("post", "/clusters").responses["400"], { $ref: "#/components/responses/BadRequestOrMissingFields" }, "provider fields");
  t.deepEqual(statuses(operation("get", "/tenants")), ["200", "401", "500", "503", "504"]);
  t.deepEqual(statuses(operation("delete", "/tenants/{id}")), ["200", "400", "401", "403", "404", "409", "500", "503", "504"]);
  t.true(statuses(operation("post", "/import")).includes("403"), "import is denied with 403");
  t.deepEqual(statuses(operation("get", "/status")), ["200", "401", "503"], "a token with security on; 503 until ready");
  t.deepEqual(statuses(operation("get", "/docs/{file}")), ["200", "404"]);
  t.deepEqual(statuses(operation("get", "/openapi.json")), ["200"]);
});

test("openapi - the error answers a row adds are listed with their reason, in status order", (t) => {
  const usage = operation("get", "/metrics/nodes/usage");
  t.deepEqual(statuses(usage), ["200", "400", "401", "403", "405", "500", "503", "504"]);
  const notAllowed = usage.responses["405"] as { description: string; content: Record<string, unknown> };
  t.regex(notAllowed.description, /superadmin/, "says when");
  t.deepEqual(notAllowed.content, { "application/json": { schema: { $ref: "#/components/schemas/Error" } } }, "the JSON error body");
  const deleteTenant = operation("delete", "/tenants/{id}").responses["403"] as { description: string };
  t.regex(deleteTenant.description, /superadmin tenant/);
  const nodeProperties = operation("post", "/getNodeProperties").responses["404"] as { description: string };
  t.truthy(nodeProperties.description, "a 404 without path parameters, from the row");
});

test("openapi - a query parameter holding an array is one comma-separated value", (t) => {
  const status = operation("get", "/clusters").parameters?.find((p) => p.name === "status");
  t.like(status, { in: "query", style: "form", explode: false });
  const dryRun = operation("post", "/clusters").parameters?.find((p) => p.name === "dryRun");
  t.false(dryRun !== undefined && "style" in dryRun, "a scalar keeps the default style");
});

test("openapi - a dry run is a query parameter; its answer is in the 200 response beside the real call's", (t) => {
  const create = operation("post", "/clusters");
  t.true(create.parameters?.some((p) => p.name === "dryRun" && p.in === "query"));
  t.is((create.responses["200"] as { content: Record<string, { schema: { anyOf?: unknown[] } }> }).content["application/json"]?.schema.anyOf?.length, 2);
  const stop = operation("post", "/clusters/{id}/services/{service}/stop");
  t.deepEqual(stop.parameters?.map((p) => p.name), ["id", "service", "dryRun"]);
  const stopAnswer = (stop.responses["200"] as { content: Record<string, { schema: { anyOf?: unknown[] } }> }).content["application/json"];
  t.deepEqual(stopAnswer?.schema.anyOf?.[0], { $ref: "#/components/schemas/JobStarted" }, "the real call's answer: the plan to follow");
  t.is(stopAnswer?.schema.anyOf?.length, 2, "and the dry run's");
  t.falsy(operation("get", "/clusters").parameters?.some((p) => p.name === "dryRun"));
});

test("openapi - an operation's parameters are its route's path parameters and its row's query parameters", (t) => {
  for (const { name, endpoint } of endpointList()) {
    for (const route of endpoint.rest?.routes ?? []) {
      const op = operation(route.method.toLowerCase() as DocMethod, openApiPath(route.path));
      const described = (op.parameters ?? []).map((p) => `${p.in}:${p.name}:${p.required}`);
      const expected = [...route.params.map((p) => `path:${p}:true`), ...Object.keys(endpoint.rest!.query).map((q) => `query:${q}:false`)];
      t.deepEqual(described, expected, `${name} ${route.path}`);
    }
  }
});

test("openapi - named schemas are components, every $ref names one, operation ids are unique", (t) => {
  const refs = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (value && typeof value === "object") {
      for (const [key, child] of Object.entries(value)) {
        if (key === "$ref" && typeof child === "string") refs.add(child);
        else walk(child);
      }
    }
  };
  walk(doc);
  const defined = [
    ...Object.keys(doc.components.schemas).map((name) => `#/components/schemas/${name}`),
    ...Object.keys(doc.components.responses).map((name) => `#/components/responses/${name}`),
  ];
  t.deepEqual([...refs].filter((ref) => !defined.includes(ref)), [], "every $ref is defined");
  t.true(refs.has("#/components/schemas/Tenant") && refs.has("#/components/schemas/ClusterEvent"));
  const tenant = doc.components.schemas["Tenant"];
  t.false(JSON.stringify(tenant).includes("$ref"), "a component is written out, not a reference to itself");

  const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
  t.is(new Set(ids).size, ids.length);
  t.deepEqual(doc.servers, [{ url: "/v2", description: "This gateway" }]);
  t.is(doc.info.version, "1.2.3");
});
