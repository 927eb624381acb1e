/**
 * The console's "Sign in with <provider>": the sign-in page offers it (from the gateway's 401), the button leads
 * through the token server to a real OpenID Connect provider (its test login form) and back to the console, signed
 * in with the token the token server issued; the token does not stay in the address.
 */
import anyTest, { type TestFn } from "ava";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "puppeteer-core";
import type { AuthService } from "@corral/auth";
import { freePort } from "@corral/deploy";
import { api } from "../helpers/api.js";
import { consoleOrigin, launchBrowser, waitForText } from "../helpers/browser.js";
import { startOidcProvider, TEST_SCOPES, type TestOidcProvider } from "../helpers/oidc-provider.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { bearer, startTokenServer, tokenFor } from "../helpers/tokens.js";

const test = anyTest as TestFn<{ sys: TestSystem; dir: string; idp: TestOidcProvider; sso: AuthService; browser: Browser }>;

test.before(async (t) => {
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-ui-sso-"));
  const realmfile = join(t.context.dir, "realm.properties");
  await writeFile(realmfile, "root: rootpw,superadmin\n");
  const idp = (t.context.idp = await startOidcProvider({ alice: { preferred_username: "alice", tenant: "acme", groups: ["corral-admin"] } }));
  // The token server the console sends browsers to is started once the console's address is known; its callback
  // address names it to the gateway (details.sso) before that.
  const ssoPort = await freePort();
  const callback = `http://127.0.0.1:${ssoPort}/oidc/callback`;
  await idp.setClients([{ client_id: "corral", client_secret: "corral-secret", redirect_uris: [callback] }]);
  const oidc = {
    "security.authentication.basic.realmfile": realmfile,
    "security.oidc.issuer": idp.issuer,
    "security.oidc.providerName": "TestIdP",
    "security.oidc.clientId": "corral",
    "security.oidc.clientSecret": "corral-secret",
    "security.oidc.scopes": TEST_SCOPES,
    "security.oidc.redirectUri": callback,
  };
  t.context.sys = await startSystem({ clusters: 1, security: { config: oidc } });
  t.context.sso = await startTokenServer(
    { context: { sys: t.context.sys, dir: t.context.dir }, teardown: () => {} }, // stopped in after.always
    { ...oidc, "security.auth.server.bind.port": ssoPort, "security.oidc.consoleUrl": `${consoleOrigin(t.context.sys.baseUrl)}/ui/` },
  );
  const root = await tokenFor(t.context.sys.tokenUrl!, "root", "rootpw");
  const created = await api(t.context.sys.baseUrl, "POST", "/tenants", { user: "root", tenant: "superadmin", headers: bearer(root), body: { tenant: { name: "acme", workers: 0 } } });
  if (created.status !== 200) throw new Error(`creating tenant acme: ${created.status} ${created.text}`);
  t.context.browser = await launchBrowser();
});
test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.sso?.stop();
  await t.context.sys?.stop();
  await t.context.idp?.stop();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
});

test("sso - Sign in with the provider leads through it and back to the console, signed in", async (t) => {
  const { sys, idp } = t.context;
  const context = await t.context.browser.createBrowserContext();
  t.teardown(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  const origin = consoleOrigin(sys.baseUrl);
  await page.goto(`${origin}/ui/#/sign-in`);
  await waitForText(page, "[data-testid=sso]", "Sign in with TestIdP");

  await Promise.all([page.waitForNavigation(), page.click("[data-testid=sso]")]);
  t.true(page.url().startsWith(`${idp.issuer}/interaction/`), `at the provider's login: ${page.url()}`);
  await page.type("input[name=login]", "alice");
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("button[type=submit]")]);

  await waitForText(page, "[data-testid=identity]", "alice @ acme");
  t.false(page.url().includes("token="), `the token is not in the address: ${page.url()}`);
  const session = await page.evaluate(() => JSON.parse(sessionStorage.getItem("corral.session") ?? "{}") as Record<string, string>);
  t.like(session, { userId: "alice", tenant: "acme", role: "admin" });
  t.truthy(session["token"]);
  const metrics = await page.$$eval("header nav a", (links) => links.map((a) => a.textContent));
  t.true(metrics.includes("Metrics"), "an admin sees the admin pages in the navigation");
});
