/**
 * The console with security on: its files are served without a token, the sign-in refuses an identity without
 * one (saying why), and a token from the token server signs in; every API call of the page then carries it.
 */
import anyTest, { type TestFn } from "ava";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "puppeteer-core";
import { consoleOrigin, launchBrowser, waitForText } from "../helpers/browser.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { tokenFor } from "../helpers/tokens.js";

const test = anyTest as TestFn<{ sys: TestSystem; dir: string; browser: Browser }>;

test.before(async (t) => {
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-ui-security-"));
  const realmfile = join(t.context.dir, "realm.properties");
  await writeFile(realmfile, "root: rootpw,superadmin\n");
  t.context.sys = await startSystem({ clusters: 1, security: { config: { "security.authentication.basic.realmfile": realmfile } } });
  t.context.browser = await launchBrowser();
});
test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.sys?.stop();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
});

test("with security on, the console loads without a token and signs in with one", async (t) => {
  const { sys } = t.context;
  const origin = consoleOrigin(sys.baseUrl);
  t.is((await fetch(`${origin}/`)).status, 200, "the page needs no token");
  t.is((await fetch(`${origin}/ui/console.js`)).status, 200, "nor its script");
  t.is((await fetch(`${sys.baseUrl}/clusters`, { headers: { "Service-UserID": "admin", "Service-TenantID": "superadmin" } })).status, 401, "the API does");

  const context = await t.context.browser.createBrowserContext();
  t.teardown(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  await page.goto(`${origin}/`);
  await page.waitForSelector("form.sign-in");
  const signIn = async (token: string) => {
    await page.$eval("#main input[name=user]", (el) => ((el as HTMLInputElement).value = "root"));
    await page.$eval("#main input[name=tenant]", (el) => ((el as HTMLInputElement).value = "superadmin"));
    await page.$eval("#main input[name=token]", (el, value) => ((el as HTMLInputElement).value = value), token);
    await page.click("form.sign-in button[type=submit]");
  };
  await signIn("");
  await waitForText(page, "form.sign-in .form-message", "token");
  t.truthy(await page.$("form.sign-in"), "still on the sign-in page");
  t.is(await page.$("[data-testid=identity]"), null, "signed in as nobody");

  const token = await tokenFor(sys.tokenUrl!, "root", "rootpw");
  await signIn(token);
  await waitForText(page, "[data-testid=identity]", "root @ superadmin");
  await waitForText(page, ".vtable[aria-label=Clusters] tbody", "No clusters");
  t.is(await page.$eval("#main input[name=token]", () => "still there").catch(() => "gone"), "gone", "the sign-in form is gone");
});
