import test from "ava";
import fc from "fast-check";
import { fromKeyToken, keyToken, kvKey } from "../src/kv-keys.js";

test("kv keys - every NAME maps to one valid token and back", (t) => {
  fc.assert(
    fc.property(fc.stringMatching(/^[A-Za-z0-9._-]{1,40}$/), (name) => {
      const token = keyToken(name);
      return /^[-_A-Za-z0-9]+$/.test(token) && fromKeyToken(token) === name;
    }),
  );
  t.pass();
});

test("kv keys - distinct names never share a token", (t) => {
  t.not(keyToken("a.b"), keyToken("a_b"));
  t.not(keyToken("a_2E"), keyToken("a.")); 
  t.is(kvKey("acme", "providers", "x.y"), "acme.providers.x_2Ey");
});
