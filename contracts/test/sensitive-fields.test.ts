import test from "ava";
import {
  REDACTED,
  isCorralError,
  keepRedactedValues,
  redactProvider,
  redactText,
  secretValues,
  seesSecrets,
  sensitiveFieldsOf,
  type PluginSpec,
  type Provider,
} from "@corral/contracts";

const field = (type: string, sensitive?: boolean) => ({ label: "x", type, ...(sensitive === undefined ? {} : { sensitive }) });
const SPEC: PluginSpec = {
  name: "cloud",
  parameters: {
    admin: { fields: { api_key: field("text", true), region: field("text"), token: field("password") }, required: [] },
    user: { fields: { user_password: field("password", false), note: field("text", false) }, required: [] },
  },
};
const provider = (provisioner: Provider["provisioner"]): Provider => ({ name: "p", providertype: "cloud", provisioner });

test("sensitiveFieldsOf: sensitive or of type password, admin and user fields alike; an unknown type hides every field", (t) => {
  const sensitive = sensitiveFieldsOf(SPEC);
  t.deepEqual(["api_key", "region", "token", "user_password", "note", "other"].filter((f) => sensitive.has(f)), ["api_key", "token", "user_password"]);
  t.true(sensitiveFieldsOf(undefined).has("anything"));
  t.false(sensitiveFieldsOf({ name: "bare" }).has("anything"), "a type without parameters has no secret field");
});

test("seesSecrets: the tenant admin and the superadmin, not users", (t) => {
  t.true(seesSecrets({ userId: "admin", tenant: "a", role: "admin" }));
  t.true(seesSecrets({ userId: "admin", tenant: "superadmin", role: "superadmin" }));
  t.false(seesSecrets({ userId: "alice", tenant: "a", role: "user" }));
});

test("redactProvider: values of secret fields become the marker; empty ones and other fields stay; nothing to hide, same object", (t) => {
  const sensitive = sensitiveFieldsOf(SPEC);
  const p = provider({ api_key: "k-1", token: 42, user_password: "", region: "eu", note: null });
  t.deepEqual(redactProvider(p, sensitive).provisioner, { api_key: REDACTED, token: REDACTED, user_password: "", region: "eu", note: null });
  t.is(p.provisioner["api_key"], "k-1", "the input is not changed");
  const plain = provider({ region: "eu" });
  t.is(redactProvider(plain, sensitive), plain);
});

test("secretValues and redactText: every occurrence, as written and as inside a JSON string, longest first", (t) => {
  const secrets = secretValues({ api_key: 'a"b', token: "ab", region: "eu", note: 7 }, sensitiveFieldsOf(SPEC));
  t.deepEqual(secrets, ['a\\"b', 'a"b', "ab"]);
  t.is(redactText('key a"b, json {"api_key":"a\\"b"}, ab twice: ab, eu', secrets), `key ${REDACTED}, json {"api_key":"${REDACTED}"}, ${REDACTED} twice: ${REDACTED}, eu`);
  t.is(redactText("nothing here", []), "nothing here");
});

test("keepRedactedValues: the marker in a secret field takes the stored value; without one it is a 400 naming the field", (t) => {
  const sensitive = sensitiveFieldsOf(SPEC);
  const stored = provider({ api_key: "k-1", token: "t-1" });
  const kept = keepRedactedValues(provider({ api_key: REDACTED, token: "t-2", region: "eu" }), stored, sensitive);
  t.deepEqual(kept.provisioner, { api_key: "k-1", token: "t-2", region: "eu" });
  t.deepEqual(keepRedactedValues(provider({ region: REDACTED }), undefined, sensitive).provisioner, { region: REDACTED }, "not a secret field: a value like any other");
  const err = t.throws(() => keepRedactedValues(provider({ user_password: REDACTED }), stored, sensitive, "providers[2]."));
  t.true(isCorralError(err) && err.status === 400);
  t.like((err as { details?: unknown }).details, { field: "providers[2].provisioner.user_password" });
});
