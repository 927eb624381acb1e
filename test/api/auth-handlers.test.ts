import anyTest, { type TestFn } from "ava";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callEndpoint } from "@corral/shared";
import { api } from "../helpers/api.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { bearer, startTokenServer, requestToken } from "../helpers/tokens.js";

/** Security on with a custom handler module loaded from a path (security.authentication.handlerClassName). */
const test = anyTest as TestFn<{ sys: TestSystem; dir: string }>;

/** A custom handler: accepts `properties.user`/`properties.password`; roles from `properties.roles` and the keys it got. */
const HANDLER = `
export default function createHandler(properties, context) {
  context.log("custom handler created");
  const keys = Object.keys(properties).sort().join("+");
  return {
    async authenticate(user, password) {
      if (password === "backend-down") throw new Error("the directory is down");
      if (user !== properties.user || password !== properties.password) return null;
      return { roles: [...properties.roles.split(","), "props:" + keys] };
    },
  };
}
`;
const NAMED = `export const createHandler = () => ({ authenticate: async (u, p) => (u === "n" && p === "npw" ? { roles: [] } : null) });\n`;
const BROKEN = `export const somethingElse = 1;\n`;

test.before(async (t) => {
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-handler-test-"));
  await writeFile(join(t.context.dir, "handler.mjs"), HANDLER);
  await writeFile(join(t.context.dir, "named.mjs"), NAMED);
  await writeFile(join(t.context.dir, "broken.mjs"), BROKEN);
  t.context.sys = await startSystem({
    security: {
      config: {
        "security.authentication.handlerClassName": join(t.context.dir, "handler.mjs"),
        "security.authentication.handler.user": "ci",
        "security.authentication.handler.password": "cipw",
        "security.authentication.handler.roles": "admin,builders",
        "security.login.maxFailuresPerAddress": 0,
      },
    },
  });
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
});

const tokenServer = startTokenServer;

test("custom handler - its answer decides the token; it gets the handler properties without the prefix", async (t) => {
  const { sys } = t.context;
  const r = await requestToken(sys.tokenUrl!, "ci", "cipw");
  t.is(r.status, 200, r.text);
  const claims = await callEndpoint(sys.nc, "auth.verify", { token: r.body.access_token });
  t.deepEqual(claims.roles, ["admin", "builders", "props:password+roles+user"]);
  const providers = await api(sys.baseUrl, "POST", "/import", {
    user: "ci",
    tenant: "superadmin",
    headers: bearer(r.body.access_token),
    body: { providers: [], hardwaretypes: [], imagetypes: [], services: [], clustertemplates: [] },
  });
  t.is(providers.status, 200, "role admin from the custom handler");
  t.is((await requestToken(sys.tokenUrl!, "ci", "wrong")).status, 401);
});

test("custom handler - a handler that throws is 503 and does not count as a failed login", async (t) => {
  const r = await requestToken(t.context.sys.tokenUrl!, "ci", "backend-down");
  t.is(r.status, 503, r.text);
  t.is(r.body.error, "service_unavailable");
});

test("custom handler - relative paths, a named createHandler export, and JASPI with a login module", async (t) => {
  const named = await tokenServer(t, { "security.authentication.handlerClassName": "./named.mjs" });
  t.is((await requestToken(named.tokenUrl, "n", "npw")).status, 200);
  const jaspi = await tokenServer(t, {
    "security.authentication.handlerClassName": "co.cask.cdap.security.server.JASPIAuthenticationHandler",
    "security.authentication.loginmodule.className": "./named.mjs",
  });
  t.is((await requestToken(jaspi.tokenUrl, "n", "npw")).status, 200);
});

test("custom handler - a module without a factory, or a missing one, fails the start with a clear message", async (t) => {
  const broken = await t.throwsAsync(tokenServer(t, { "security.authentication.handlerClassName": "./broken.mjs" }));
  t.regex(broken?.message ?? "", /must export a factory/);
  const missing = await t.throwsAsync(tokenServer(t, { "security.authentication.handlerClassName": "./nope.mjs" }));
  t.regex(missing?.message ?? "", /cannot load the authentication handler module \.\/nope\.mjs/);
});

test("basic handler - a missing realm file fails the start", async (t) => {
  const err = await t.throwsAsync(tokenServer(t, { "security.authentication.handlerClassName": "basic" }));
  t.regex(err?.message ?? "", /realmfile is required/);
  const gone = await t.throwsAsync(
    tokenServer(t, { "security.authentication.handlerClassName": "basic", "security.authentication.basic.realmfile": "./nope" }),
  );
  t.regex(gone?.message ?? "", /ENOENT/);
});
