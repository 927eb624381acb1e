import test from "ava";
import type { Provider } from "../../src/entities.js";
import { mergeProviderUpdate, parseProvider, type ProviderValidationContext } from "../../src/validation/index.js";
import { COOPR_CONTEXT, fixture, throws400 } from "./helpers.js";

const ctx: ProviderValidationContext = { isProviderType: (name) => name === "joyent" || name === "aws" };

test("provider - full provider, canonical key order", (t) => {
  const provider = parseProvider(
    {
      provisioner: { joyent_version: "~7.0", port: 22, opts: { a: [1] } },
      providertype: "joyent",
      description: "J",
      name: "joyent",
      version: 3,
    },
    ctx,
  );
  t.deepEqual(provider, {
    name: "joyent",
    description: "J",
    providertype: "joyent",
    provisioner: { joyent_version: "~7.0", port: 22, opts: { a: [1] } },
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

const OLD: Provider = { name: "joyent", description: "old", providertype: "joyent", provisioner: { a: "1" } };

test("provider update - absent description, providertype and provisioner keep their old values", (t) => {
  const merged = mergeProviderUpdate(OLD, { name: "joyent" });
  t.deepEqual(parseProvider(merged, ctx), OLD);
  t.deepEqual(parseProvider(mergeProviderUpdate(OLD, { name: "joyent", description: null }), ctx), OLD);
});

test("provider update - given values replace the old ones", (t) => {
  const merged = mergeProviderUpdate(OLD, {
    name: "joyent",
    description: "",
    providertype: "aws",
    provisioner: { b: 2 },
  });
  t.deepEqual(parseProvider(merged, ctx), {
    name: "joyent",
    description: "",
    providertype: "aws",
    provisioner: { b: 2 },
  });
});

test("provider update - an old provider without description stays without", (t) => {
  const { description: _description, ...old } = OLD;
  t.deepEqual(parseProvider(mergeProviderUpdate(old, { name: "joyent" }), ctx), old);
});

test("provider update - returns a new object and still validates the merged body", (t) => {
  const body = { name: "joyent" };
  t.not(mergeProviderUpdate(OLD, body), body);
  t.deepEqual(body, { name: "joyent" });
  throws400(
    t,
    () => parseProvider(mergeProviderUpdate(OLD, { name: "joyent", providertype: "x" }), ctx),
    "providertype x is not a known provider plugin type",
    "providertype",
  );
  throws400(t, () => parseProvider(mergeProviderUpdate(OLD, {}), ctx), "name is required", "name");
  throws400(t, () => mergeProviderUpdate(OLD, null), "body must be a JSON object", "body");
});

test("provider - the fixture providers parse", (t) => {
  const provider = parseProvider(fixture("providers/joyent.json"), COOPR_CONTEXT);
  t.is(provider.providertype, "joyent");
  t.is(provider.provisioner["joyent_version"], "~7.0");
});
