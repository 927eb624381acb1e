import test from "ava";
import { createHash } from "node:crypto";
import { credentialMatches, deobfuscate, obfuscate, parseRealm } from "../src/domain/realm.js";

test("realm - lines are `user: password[,role ...]`, comments and blanks skipped", (t) => {
  const realm = parseRealm("# users\n\nadmin: password,admin\nalice = secret, devs , ops\n! old\nbob:pw\n");
  t.deepEqual([...realm.users.keys()], ["admin", "alice", "bob"]);
  t.deepEqual(realm.users.get("alice"), { credential: "secret", roles: ["devs", "ops"] });
  t.deepEqual(realm.users.get("bob")?.roles, []);
  t.deepEqual(realm.problems, []);
});

test("realm - unusable lines are reported without their password", (t) => {
  const realm = parseRealm("nocolon\ncarol:\ndave: CRYPT:abcdefgh,admin\n");
  t.is(realm.users.size, 0);
  t.is(realm.problems.length, 3);
  t.false(realm.problems.join(" ").includes("abcdefgh"));
});

test("realm - plain, MD5: and OBF: passwords match, others do not", (t) => {
  t.true(credentialMatches("secret", "secret"));
  t.false(credentialMatches("secret", "Secret"));
  const md5 = createHash("md5").update("pw").digest("hex");
  t.true(credentialMatches(`MD5:${md5}`, "pw"));
  t.true(credentialMatches(`md5:${md5.toUpperCase()}`, "pw"));
  t.false(credentialMatches(`MD5:${md5}`, "px"));
  t.true(credentialMatches(obfuscate("pässword"), "pässword"));
  t.false(credentialMatches(obfuscate("password"), "passwore"));
});

test("realm - OBF: is Jetty's obfuscation (known vector)", (t) => {
  // From Jetty's documentation: `java org.eclipse.jetty.util.security.Password password`.
  t.is(obfuscate("password"), "OBF:1v2j1uum1xtv1zej1zer1xtn1uvk1v1v");
  t.is(deobfuscate("OBF:1v2j1uum1xtv1zej1zer1xtn1uvk1v1v"), "password");
});
