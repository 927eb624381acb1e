/** The endpoint table (contracts/src/endpoints): one row per operation, consistent with the subjects and with itself. */
import test from "ava";
import { endpointList, endpointSubject, subjects, type JsonSchema } from "@corral/contracts";
import { schemaProblems } from "../../test/helpers/json-schema-check.js";

/** Every leaf of `subjects` under the services' sections, by its path (`clusters.create`). */
function serviceSubjects(): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (node: unknown, path: string[]) => {
    if (typeof node === "string") found.set(path.join("."), node);
    else if (node && typeof node === "object") for (const [key, child] of Object.entries(node)) walk(child, [...path, key]);
  };
  walk(subjects, []);
  return found;
}

/** Every schema nested in `schema`, itself included. */
function nestedSchemas(schema: JsonSchema): JsonSchema[] {
  const children = [
    ...Object.values(schema.properties ?? {}),
    ...(schema.items ? [schema.items] : []),
    ...(typeof schema.additionalProperties === "object" ? [schema.additionalProperties] : []),
    ...(schema.anyOf ?? []),
  ];
  return [schema, ...children.flatMap(nestedSchemas)];
}

test("endpoints - each served endpoint is named by the path of its subject in subjects, and every service subject has a row", (t) => {
  const bySubjectPath = serviceSubjects();
  const served = endpointList().filter(({ endpoint }) => endpoint.subject !== undefined);
  for (const { name, endpoint } of served) {
    t.is(bySubjectPath.get(name), endpoint.subject, name);
    t.true(endpoint.subject?.startsWith(`corral.${endpoint.service}.`), `${name} is answered by ${endpoint.service}`);
  }
  const tableSubjects = served.map(({ endpoint }) => endpoint.subject);
  t.is(new Set(tableSubjects).size, tableSubjects.length, "no subject has two rows");
  t.deepEqual([...bySubjectPath.values()].filter((s) => !tableSubjects.includes(s)), [], "every service subject is in the table");
});

test("endpoints - an endpoint's NATS subject is its name under corral.", (t) => {
  for (const { name, endpoint } of endpointList()) {
    if (endpoint.subject !== undefined) t.is(endpoint.subject, endpointSubject(name), name);
  }
});

test("endpoints - REST rows declare a role and a body schema exactly when a body is read; internal rows a request schema", (t) => {
  for (const { name, endpoint } of endpointList()) {
    if (endpoint.stream) {
      t.is(endpoint.subject, undefined, `${name}: an event stream is served by the gateway itself`);
      t.is(endpoint.rest, undefined, `${name}: an event stream is not a REST call`);
      t.is(endpoint.request.body !== undefined, endpoint.stream.protocol === "websocket", `${name}: only a WebSocket takes messages`);
      continue;
    }
    if (!endpoint.rest) {
      t.truthy(endpoint.request.body, `${name}: an internal endpoint describes its request`);
      continue;
    }
    t.true(endpoint.rest.routes.length > 0, `${name} has routes`);
    t.is(endpoint.request.body === undefined, endpoint.rest.body === "none", `${name}: body ${endpoint.rest.body}`);
    t.is(endpoint.rest.access === "public", endpoint.subject === undefined, `${name}: only the gateway's own routes are public`);
    for (const r of endpoint.rest.routes) {
      t.deepEqual(r.params, r.path.split("/").filter((s) => s.startsWith(":")).map((s) => s.slice(1)), `${name}: ${r.path}`);
      const declared = Object.keys(endpoint.request.params?.properties ?? {});
      t.deepEqual(r.params.filter((p) => !declared.includes(p)), [], `${name}: ${r.path} declares its path parameters`);
    }
  }
});

test("endpoints - every schema's required keys are among its properties", (t) => {
  for (const { name, endpoint } of endpointList()) {
    const { body, params, query } = endpoint.request;
    const schemas = [body, params, query, endpoint.reply].filter((s) => s !== undefined && s !== "empty") as JsonSchema[];
    for (const schema of schemas.flatMap(nestedSchemas)) {
      for (const key of schema.required ?? []) t.truthy(schema.properties?.[key], `${name}: required ${key} is declared`);
    }
  }
});

test("json-schema-check - names missing keys, keys a closed object does not declare, wrong types and values outside an enum", (t) => {
  const schema: JsonSchema = {
    type: "object",
    properties: { id: { type: "string" }, n: { type: "integer", minimum: 0 }, state: { type: "string", enum: ["a", "b"] } },
    required: ["id", "n"],
    additionalProperties: false,
  };
  t.deepEqual(schemaProblems(schema, { id: "x", n: 1, state: "a" }), []);
  t.deepEqual(schemaProblems(schema, { n: 1.5, state: "c", extra: true }), [
    "$: id is missing",
    "$.n: expected integer, got number 1.5",
    '$.state: "c" is not one of a, b',
    "$.extra: not in the schema",
  ]);
  t.deepEqual(schemaProblems({ type: "array", items: schema }, [{ id: "x", n: -1 }]), ["$[0].n: -1 < 0"]);
});
