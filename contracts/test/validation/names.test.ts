import test from "ava";
import { isValidName, parseName } from "../../src/validation/index.js";
import { throws400 } from "./helpers.js";

test("names - isValidName accepts letters, digits, dot, underscore and dash", (t) => {
  for (const name of ["a", "kube-apiserver", "M6i_2.xlarge", "0", "a".repeat(255), "..", "__proto_"]) {
    t.true(isValidName(name), name);
  }
});

test("names - isValidName refuses empty, too long, other characters and non-strings", (t) => {
  for (const name of ["", "__proto__", "a".repeat(256), "a b", "a/b", "ä", "a:b", "%x%", 3, null, undefined, ["a"], { a: 1 }]) {
    t.false(isValidName(name), String(name));
  }
});

test("names - parseName returns the name", (t) => {
  t.is(parseName("aws-us-east-1", "name"), "aws-us-east-1");
});

test("names - parseName names the field and the problem", (t) => {
  throws400(t, () => parseName(undefined, "name"), "name is required", "name");
  throws400(t, () => parseName(null, "id"), "id must be a string (got null)", "id");
  throws400(t, () => parseName(42, "name"), "name must be a string (got 42)", "name");
  throws400(t, () => parseName("", "name"), "name must not be empty", "name");
  throws400(
    t,
    () => parseName("a b", "defaults.provider"),
    "defaults.provider must contain only letters, digits, '.', '_' and '-' (got \"a b\")",
    "defaults.provider",
  );
  throws400(t, () => parseName("x".repeat(256), "name"), "name must be at most 255 characters (got 256)", "name");
});
