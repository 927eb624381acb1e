import test from "ava";
import { handlerKind } from "../src/authn/select.js";

test("select - backend names and Coopr's Java class names choose the built-in handlers", (t) => {
  t.deepEqual(handlerKind("basic"), { kind: "basic" });
  t.deepEqual(handlerKind(""), { kind: "basic" });
  t.deepEqual(handlerKind("co.cask.cdap.security.server.BasicAuthenticationHandler"), { kind: "basic" });
  t.deepEqual(handlerKind("org.eclipse.jetty.security.HashLoginService"), { kind: "basic" });
  t.deepEqual(handlerKind("ldap"), { kind: "ldap" });
  t.deepEqual(handlerKind("co.cask.cdap.security.server.LDAPAuthenticationHandler"), { kind: "ldap" });
});

test("select - paths, file URLs and package names are custom modules, even when they mention ldap", (t) => {
  t.deepEqual(handlerKind("./handlers/my-ldap.mjs"), { kind: "custom", module: "./handlers/my-ldap.mjs" });
  t.deepEqual(handlerKind("/opt/corral/auth.js"), { kind: "custom", module: "/opt/corral/auth.js" });
  t.deepEqual(handlerKind("file:///opt/corral/auth.mjs"), { kind: "custom", module: "file:///opt/corral/auth.mjs" });
  t.deepEqual(handlerKind("@acme/corral-auth"), { kind: "custom", module: "@acme/corral-auth" });
});

test("select - JASPI takes its module from the login module class name", (t) => {
  t.deepEqual(handlerKind("co.cask.cdap.security.server.JASPIAuthenticationHandler", "./my-module.mjs"), {
    kind: "custom",
    module: "./my-module.mjs",
  });
  t.deepEqual(handlerKind("JASPIAuthenticationHandler", "org.eclipse.jetty.jaas.spi.LdapLoginModule"), { kind: "ldap" });
  t.throws(() => handlerKind("JASPIAuthenticationHandler", ""), { message: /loginmodule\.className/ });
});
