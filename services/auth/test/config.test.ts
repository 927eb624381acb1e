import test from "ava";
import { loadConfig } from "@corral/shared";
import { tokenServerUrl } from "../src/config.js";

test("config - the token server URL the gateway names follows address, port and TLS", (t) => {
  t.is(tokenServerUrl(loadConfig()), "http://localhost:55059/token");
  const tls = loadConfig({
    overrides: {
      "security.auth.server.address": "auth.example.com",
      "security.auth.server.bind.port": 8443,
      "security.auth.server.ssl.keystore.path": "/etc/corral/keystore.p12",
    },
  });
  t.is(tokenServerUrl(tls), "https://auth.example.com:8443/token");
  t.is(tokenServerUrl(loadConfig({ overrides: { "security.auth.server.address": "::1" } })), "http://[::1]:55059/token");
});

test("config - the token lifetime and throttle keys have their documented defaults", (t) => {
  const c = loadConfig();
  t.is(c.get("security.token.expiration.seconds"), 86400);
  t.is(c.get("security.login.maxFailuresPerUser"), 5);
  t.is(c.get("security.login.maxFailuresPerAddress"), 20);
  t.is(c.get("security.login.failureWindowSeconds"), 60);
  t.is(c.get("security.enabled"), false);
});
