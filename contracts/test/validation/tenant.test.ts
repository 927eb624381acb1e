/** The tenant write as the endpoint table declares it (entity-schemas.ts), checked and decoded as the tenancy service gets it. */
import test from "ava";
import { tenantFields, tenantWriteSchema } from "../../src/endpoints/entity-schemas.js";
import { bodyValidator } from "../../src/validation/index.js";
import { throws400 } from "./helpers.js";

const parseTenant = bodyValidator(tenantFields());
const validateWrite = bodyValidator(tenantWriteSchema);
/** What the tenancy handlers read of a write: the tenant, and `bootstrap` false unless given. */
const parseTenantWrite = (body: unknown) => {
  const { tenant, bootstrap = false } = validateWrite(body);
  return { tenant, bootstrap };
};

test("tenant - minimal tenant", (t) => {
  t.deepEqual(parseTenant({ name: "companyX", workers: 10 }), { name: "companyX", workers: 10 });
});

test("tenant - all known fields, numeric strings become integers, key order is canonical", (t) => {
  const tenant = parseTenant({ maxNodes: "1000", description: "X", maxClusters: 100, workers: "10", name: "companyX" });
  t.deepEqual(tenant, { name: "companyX", workers: 10, description: "X", maxClusters: 100, maxNodes: 1000 });
  t.deepEqual(Object.keys(tenant), ["name", "workers", "description", "maxClusters", "maxNodes"]);
});

test("tenant - null quotas and description mean absent", (t) => {
  t.deepEqual(parseTenant({ name: "a", workers: 0, maxClusters: null, maxNodes: null, description: null }), {
    name: "a",
    workers: 0,
  });
});

test("tenant - extra settings are kept as given and copied", (t) => {
  const nested = { a: [1, "two", { three: true }], b: null };
  const body = { name: "a", workers: 1, region: "eu", limits: nested, flag: false };
  const tenant = parseTenant(body);
  t.deepEqual(tenant, { name: "a", workers: 1, region: "eu", limits: nested, flag: false });
  t.not(tenant, body);
  t.not((tenant as Record<string, unknown>)["limits"], nested);
});

test("tenant - extra settings must be JSON a store keeps: finite numbers", (t) => {
  throws400(t, () => parseTenant({ name: "a", workers: 1, extra: -Infinity }), "extra must be a finite number (got -Infinity)", "extra");
  throws400(t, () => parseTenant({ name: "a", workers: 1, limits: { n: [NaN] } }), "limits.n[0] must be a finite number (got NaN)", "limits.n[0]");
});

test("tenant - a __proto__ setting is refused (it could not survive msgpack) and never touches the prototype", (t) => {
  throws400(t, () => parseTenant(JSON.parse('{"name":"a","workers":1,"__proto__":{"polluted":true}}')), "__proto__ is a reserved key and cannot be used as an object key", "__proto__");
  t.is(({} as Record<string, unknown>)["polluted"], undefined);
});

test("tenant - the body must be a JSON object", (t) => {
  for (const body of [null, undefined, [], "x", 3, true]) {
    throws400(t, () => parseTenant(body), "body must be a JSON object", "body");
  }
});

test("tenant - required fields", (t) => {
  throws400(t, () => parseTenant({ workers: 1 }), "name is required", "name");
  throws400(t, () => parseTenant({ name: "a" }), "workers is required", "workers");
  throws400(
    t,
    () => parseTenant({ name: "a b", workers: 1 }),
    `name must contain only letters, digits, '.', '_' and '-' (got "a b")`,
    "name",
  );
});

test("tenant - integers accept numeric strings and refuse everything else", (t) => {
  t.is(parseTenant({ name: "a", workers: "3" }).workers, 3);
  t.is(parseTenant({ name: "a", workers: 3.0 }).workers, 3);
  t.is(parseTenant({ name: "a", workers: "007" }).workers, 7);
  t.is(parseTenant({ name: "a", workers: "-0" }).workers, 0);
  t.is(Object.is(parseTenant({ name: "a", workers: -0 }).workers, 0), true);
  t.is(parseTenant({ name: "a", workers: Number.MAX_SAFE_INTEGER }).workers, Number.MAX_SAFE_INTEGER);
  throws400(t, () => parseTenant({ name: "a", workers: "3.5" }), `workers must be an integer (got "3.5")`, "workers");
  throws400(t, () => parseTenant({ name: "a", workers: 3.5 }), "workers must be an integer (got 3.5)", "workers");
  throws400(t, () => parseTenant({ name: "a", workers: "" }), `workers must be an integer (got "")`, "workers");
  throws400(t, () => parseTenant({ name: "a", workers: "abc" }), `workers must be an integer (got "abc")`, "workers");
  throws400(t, () => parseTenant({ name: "a", workers: " 3" }), `workers must be an integer (got " 3")`, "workers");
  throws400(t, () => parseTenant({ name: "a", workers: "1e3" }), `workers must be an integer (got "1e3")`, "workers");
  throws400(t, () => parseTenant({ name: "a", workers: true }), "workers must be an integer (got true)", "workers");
  throws400(t, () => parseTenant({ name: "a", workers: null }), "workers must be an integer (got null)", "workers");
  throws400(t, () => parseTenant({ name: "a", workers: [1] }), "workers must be an integer (got an array)", "workers");
  throws400(t, () => parseTenant({ name: "a", workers: -1 }), "workers must be >= 0 (got -1)", "workers");
  throws400(t, () => parseTenant({ name: "a", workers: "-2" }), "workers must be >= 0 (got -2)", "workers");
  throws400(
    t,
    () => parseTenant({ name: "a", workers: 1, maxNodes: "9007199254740992" }),
    "maxNodes must be <= 9007199254740991",
    "maxNodes",
  );
  throws400(
    t,
    () => parseTenant({ name: "a", workers: 1, maxClusters: 2 ** 60 }),
    "maxClusters must be <= 9007199254740991",
    "maxClusters",
  );
  throws400(
    t,
    () => parseTenant({ name: "a", workers: 1, maxClusters: -5 }),
    "maxClusters must be >= 0 (got -5)",
    "maxClusters",
  );
});

test("tenant - description must be a string", (t) => {
  throws400(
    t,
    () => parseTenant({ name: "a", workers: 1, description: 5 }),
    "description must be a string (got 5)",
    "description",
  );
});

test("tenant write - wrapper with bootstrap", (t) => {
  t.deepEqual(parseTenantWrite({ tenant: { name: "a", workers: 2 } }), {
    tenant: { name: "a", workers: 2 },
    bootstrap: false,
  });
  t.true(parseTenantWrite({ tenant: { name: "a", workers: 2 }, bootstrap: true }).bootstrap);
  t.true(parseTenantWrite({ tenant: { name: "a", workers: 2 }, bootstrap: "true" }).bootstrap);
  t.false(parseTenantWrite({ tenant: { name: "a", workers: 2 }, bootstrap: "false" }).bootstrap);
  t.false(parseTenantWrite({ tenant: { name: "a", workers: 2 }, bootstrap: null }).bootstrap);
});

test("tenant write - unknown wrapper keys are ignored", (t) => {
  t.deepEqual(parseTenantWrite({ tenant: { name: "a", workers: 2 }, other: 1 }), {
    tenant: { name: "a", workers: 2 },
    bootstrap: false,
  });
});

test("tenant write - errors", (t) => {
  throws400(t, () => parseTenantWrite([]), "body must be a JSON object", "body");
  for (const tenant of [undefined, null, "a", [], 3]) {
    throws400(t, () => parseTenantWrite({ tenant }), "tenant must be an object", "tenant");
  }
  throws400(t, () => parseTenantWrite({ tenant: { workers: 1 } }), "tenant.name is required", "tenant.name");
  throws400(
    t,
    () => parseTenantWrite({ tenant: { name: "a", workers: "x" } }),
    `tenant.workers must be an integer (got "x")`,
    "tenant.workers",
  );
  throws400(
    t,
    () => parseTenantWrite({ tenant: { name: "a", workers: 1 }, bootstrap: "yes" }),
    `bootstrap must be a boolean (got "yes")`,
    "bootstrap",
  );
  throws400(
    t,
    () => parseTenantWrite({ tenant: { name: "a", workers: 1 }, bootstrap: 1 }),
    "bootstrap must be a boolean (got 1)",
    "bootstrap",
  );
});
