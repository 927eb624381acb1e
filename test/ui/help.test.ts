/**
 * The console's Help page, with security on and nobody signed in: it is in the navigation, lists the guides the
 * gateway serves at `/docs`, and a guide opens as its page; the API reference is linked.
 */
import anyTest, { type TestFn } from "ava";
import { readdirSync } from "node:fs";
import type { Browser } from "puppeteer-core";
import { consoleOrigin, launchBrowser, waitForText } from "../helpers/browser.js";
import { startSystem, type TestSystem } from "../helpers/system.js";

const test = anyTest as TestFn<{ sys: TestSystem; browser: Browser }>;

test.before(async (t) => {
  t.context.sys = await startSystem({ security: { authService: false } });
  t.context.browser = await launchBrowser();
});
test.after.always(async (t) => {
  await t.context.browser?.close();
  await t.context.sys?.stop();
});

test("help - signed out, the Help page lists every guide and opens one; the API reference is linked", async (t) => {
  const origin = consoleOrigin(t.context.sys.baseUrl);
  const context = await t.context.browser.createBrowserContext();
  t.teardown(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);

  await page.goto(`${origin}/`);
  await page.waitForSelector("form.sign-in");
  const nav = await page.$$eval("header.top nav a", (links) => links.map((a) => [a.textContent, a.getAttribute("href")]));
  t.deepEqual(nav, [["Help", "#/help"]], "signed out, the navigation has Help only");

  await page.click("header.top nav a");
  await waitForText(page, "#main ul.guides", "api.md");
  const guides = await page.$$eval("#main ul.guides a", (links) => links.map((a) => a.getAttribute("href") ?? ""));
  const files = readdirSync(new URL("../../docs/", import.meta.url)).filter((f) => f.endsWith(".md"));
  t.is(guides.length, files.length, "one link per guide");
  t.true(guides.includes("/docs/operations") && guides.includes("/docs"), guides.join(", "));
  t.truthy(await page.$('#main a[href="/v2/docs"]'), "the API reference");

  await Promise.all([page.waitForNavigation(), page.click('#main a[href="/docs/operations"]')]);
  t.is(new URL(page.url()).pathname, "/docs/operations");
  t.is(await page.$eval("main h1", (h) => h.textContent), "Operations");
  await Promise.all([page.waitForNavigation(), page.click('main a[href="/docs/configuration"]')]);
  t.is(await page.$eval("main h1", (h) => h.textContent), "Configuration", "links between guides lead to their pages");
});
