import test from "ava";
import { parseMachineType } from "../../src/validation/index.js";
import { fixture, throws400 } from "./helpers.js";

test("machine type - hardware type with flavors", (t) => {
  const body = {
    name: "small",
    description: "1 vCPU",
    version: 1,
    providermap: { digitalocean: { flavor: "s-2vcpu-2gb" }, "gce-europe": { flavor: "e2-small" } },
  };
  const type = parseMachineType(body);
  t.deepEqual(type, {
    name: "small",
    description: "1 vCPU",
    providermap: { digitalocean: { flavor: "s-2vcpu-2gb" }, "gce-europe": { flavor: "e2-small" } },
  });
  t.deepEqual(Object.keys(type), ["name", "description", "providermap"]);
  t.not(type.providermap, body.providermap);
  t.not(type.providermap["digitalocean"], body.providermap.digitalocean);
});

test("machine type - numbers and booleans become strings", (t) => {
  t.deepEqual(
    parseMachineType({ name: "x", providermap: { aws: { flavor: 3, ebs: true, cost: 0.175 } } }).providermap,
    {
      aws: { flavor: "3", ebs: "true", cost: "0.175" },
    },
  );
});

test("machine type - an empty providermap is allowed", (t) => {
  t.deepEqual(parseMachineType({ name: "x", providermap: {} }), { name: "x", providermap: {} });
});

test("machine type - errors", (t) => {
  throws400(t, () => parseMachineType([]), "body must be a JSON object", "body");
  throws400(t, () => parseMachineType({ name: "x" }), "providermap is required", "providermap");
  throws400(
    t,
    () => parseMachineType({ name: "x", providermap: [] }),
    "providermap must be an object (got an array)",
    "providermap",
  );
  throws400(
    t,
    () => parseMachineType({ name: "x", providermap: { "aws east": { flavor: "a" } } }),
    `providermap key "aws east" must contain only letters, digits, '.', '_' and '-'`,
    "providermap",
  );
  throws400(
    t,
    () => parseMachineType({ name: "x", providermap: { aws: "m1.large" } }),
    `providermap.aws must be an object (got "m1.large")`,
    "providermap.aws",
  );
  throws400(
    t,
    () => parseMachineType({ name: "x", providermap: { aws: null } }),
    "providermap.aws must be an object (got null)",
    "providermap.aws",
  );
  throws400(
    t,
    () => parseMachineType({ name: "x", providermap: { aws: { flavor: { size: 1 } } } }),
    "providermap.aws.flavor must be a string (got an object)",
    "providermap.aws.flavor",
  );
  throws400(
    t,
    () => parseMachineType({ name: "x", providermap: { aws: { flavor: ["a"] } } }),
    "providermap.aws.flavor must be a string (got an array)",
    "providermap.aws.flavor",
  );
  throws400(
    t,
    () => parseMachineType({ name: "x", providermap: { aws: { flavor: null } } }),
    "providermap.aws.flavor must be a string (got null)",
    "providermap.aws.flavor",
  );
});

test("machine type - the test catalog's image type parses", (t) => {
  const image = parseMachineType(fixture("imagetypes/debian12.json"));
  t.is(image.providermap["digitalocean"]?.["image"], "debian-12-x64");
});
