import test from "ava";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { envNameOf, loadConfig } from "../src/config.js";

test("config - defaults follow the spec", (t) => {
  const c = loadConfig({ env: {} });
  t.is(c.get("server.port"), 55054);
  t.is(c.get("security.enabled"), false);
  t.is(c.get("security.auth.server.bind.port"), 55059);
});

test("config - environment variables use CORRAL_ and underscores", (t) => {
  t.is(envNameOf("server.port"), "CORRAL_SERVER_PORT");
  const c = loadConfig({ env: { CORRAL_SERVER_PORT: "8080", CORRAL_SECURITY_ENABLED: "true", CORRAL_NATS_URL: "nats://x:1" } });
  t.is(c.get("server.port"), 8080);
  t.is(c.get("security.enabled"), true);
  t.is(c.get("nats.url"), "nats://x:1");
});

test("config - a file is read and the environment wins over it", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "corral-config-"));
  const props = join(dir, "corral.properties");
  writeFileSync(props, "# comment\nserver.port=1234\nsecurity.authentication.handler.userBaseDn = ou=people,dc=x\n");
  const c = loadConfig({ env: { CORRAL_CONFIG: props, CORRAL_LOG_LEVEL: "debug" } });
  t.is(c.get("server.port"), 1234);
  t.is(c.get("log.level"), "debug");
  t.is(c.handlerProperties()["userBaseDn"], "ou=people,dc=x");
  const json = join(dir, "corral.json");
  writeFileSync(json, JSON.stringify({ server: { port: 99 } }));
  t.is(loadConfig({ file: json, env: { CORRAL_SERVER_PORT: "100" } }).get("server.port"), 100);
  t.is(loadConfig({ file: json }).get("server.port"), 99);
});

test("config - a value of the wrong type names the key", (t) => {
  t.throws(() => loadConfig({ env: { CORRAL_SERVER_PORT: "abc" } }), { message: /server\.port must be a number/ });
  t.throws(() => loadConfig({ env: { CORRAL_SECURITY_ENABLED: "maybe" } }), { message: /security\.enabled/ });
});
