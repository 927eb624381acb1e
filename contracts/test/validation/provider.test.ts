import test from "ava";
import type { Provider } from "../../src/entities.js";
import { mergeProviderUpdate, parseProvider, type ProviderValidationContext } from "../../src/validation/index.js";
import { CATALOG_CONTEXT, fixture, throws400 } from "./helpers.js";

const ctx: ProviderValidationContext = { isProviderType: (name) => name === "digitalocean" || name === "aws" };

test("provider - full provider, canonical key order", (t) => {
  const provider = parseProvider(
    {
      provisioner: { api_version: "v2", port: 22, opts: { a: [1] } },
      providertype: "digitalocean",
      description: "D",
      name: "digitalocean",
      version: 3,
    },
    ctx,
  );
  t.deepEqual(provider, {
    name: "digitalocean",
    description: "D",
    providertype: "digitalocean",
    provisioner: { api_version: "v2", port: 22, opts: { a: [1] } },
  });
  t.deepEqual(Object.keys(provider), ["name", "description", "providertype", "provisioner"]);
});

test("provider - provisioner defaults to an empty object, unknown keys are dropped", (t) => {
  t.deepEqual(parseProvider({ name: "p", providertype: "aws", links: [] }, ctx), {
    name: "p",
    providertype: "aws",
    provisioner: {},
  });
  t.deepEqual(parseProvider({ name: "p", providertype: "aws", provisioner: null }, ctx).provisioner, {});
});

test("provider - the provisioner settings are a copy", (t) => {
  const settings = { nested: { a: "b" } };
  const provider = parseProvider({ name: "p", providertype: "aws", provisioner: settings }, ctx);
  t.not(provider.provisioner, settings);
  t.not(provider.provisioner["nested"], settings.nested);
});

test("provider - errors", (t) => {
  throws400(t, () => parseProvider("x", ctx), "body must be a JSON object", "body");
  throws400(t, () => parseProvider({ providertype: "aws" }, ctx), "name is required", "name");
  throws400(t, () => parseProvider({ name: "p" }, ctx), "providertype is required", "providertype");
  throws400(
    t,
    () => parseProvider({ name: "p", providertype: "" }, ctx),
    "providertype must not be empty",
    "providertype",
  );
  throws400(
    t,
    () => parseProvider({ name: "p", providertype: 1 }, ctx),
    "providertype must be a string (got 1)",
    "providertype",
  );
  throws400(
    t,
    () => parseProvider({ name: "p", providertype: "vsphere" }, ctx),
    "providertype vsphere is not a known provider plugin type",
    "providertype",
  );
  throws400(
    t,
    () => parseProvider({ name: "p", providertype: "aws", provisioner: ["a"] }, ctx),
    "provisioner must be an object (got an array)",
    "provisioner",
  );
  throws400(
    t,
    () => parseProvider({ name: "p", providertype: "aws", description: false }, ctx),
    "description must be a string (got false)",
    "description",
  );
});

test("provider - provisioner values are any JSON but must be JSON", (t) => {
  throws400(
    t,
    () => parseProvider({ name: "p", providertype: "aws", provisioner: { a: { b: Number.NaN } } }, ctx),
    "provisioner.a.b must be a finite number (got NaN)",
    "provisioner.a.b",
  );
  throws400(
    t,
    () => parseProvider({ name: "p", providertype: "aws", provisioner: { when: new Date(0) } }, ctx),
    "provisioner.when must be a JSON value (got object)",
    "provisioner.when",
  );
});

test("provider - deeply nested settings are refused, not a stack overflow", (t) => {
  let deep: unknown = "leaf";
  for (let i = 0; i < 10_000; i++) deep = [deep];
  const err = t.throws(() => parseProvider({ name: "p", providertype: "aws", provisioner: { deep } }, ctx));
  t.regex(err?.message ?? "", /^provisioner\.deep(\[0\])+ is nested too deeply \(at most 64 levels\)$/);
});

const OLD: Provider = { name: "digitalocean", description: "old", providertype: "digitalocean", provisioner: { a: "1" } };

test("provider update - absent description, providertype and provisioner keep their old values", (t) => {
  const merged = mergeProviderUpdate(OLD, { name: "digitalocean" });
  t.deepEqual(parseProvider(merged, ctx), OLD);
  t.deepEqual(parseProvider(mergeProviderUpdate(OLD, { name: "digitalocean", description: null }), ctx), OLD);
});

test("provider update - given values replace the old ones", (t) => {
  const merged = mergeProviderUpdate(OLD, {
    name: "digitalocean",
    description: "",
    providertype: "aws",
    provisioner: { b: 2 },
  });
  t.deepEqual(parseProvider(merged, ctx), {
    name: "digitalocean",
    description: "",
    providertype: "aws",
    provisioner: { b: 2 },
  });
});

test("provider update - an old provider without description stays without", (t) => {
  const { description: _description, ...old } = OLD;
  t.deepEqual(parseProvider(mergeProviderUpdate(old, { name: "digitalocean" }), ctx), old);
});

test("provider update - returns a new object and still validates the merged body", (t) => {
  const body = { name: "digitalocean" };
  t.not(mergeProviderUpdate(OLD, body), body);
  t.deepEqual(body, { name: "digitalocean" });
  throws400(
    t,
    () => parseProvider(mergeProviderUpdate(OLD, { name: "digitalocean", providertype: "x" }), ctx),
    "providertype x is not a known provider plugin type",
    "providertype",
  );
  throws400(t, () => parseProvider(mergeProviderUpdate(OLD, {}), ctx), "name is required", "name");
  throws400(t, () => mergeProviderUpdate(OLD, null), "body must be a JSON object", "body");
});

test("provider - the test catalog's providers parse", (t) => {
  const provider = parseProvider(fixture("providers/digitalocean.json"), CATALOG_CONTEXT);
  t.is(provider.providertype, "digitalocean");
  t.is(provider.provisioner["region"], "ams3");
  t.is(provider.provisioner["monitoring"], true);
});
