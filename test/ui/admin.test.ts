/**
 * The console's superadmin and metrics pages in real headless Chromium against a real Corral: tenants created,
 * edited and deleted with the server's 400s and 409s shown, provisioners with the workers they run per tenant,
 * queue and node-usage charts drawn from real figures; a tenant's admin gets none of the superadmin's pages (and
 * the API refuses them anyway) and sees only its own tenant in the charts.
 */
import type { Page } from "puppeteer-core";
import { api, SUPERADMIN } from "../helpers/api.js";
import { openSignedIn, waitForText } from "../helpers/browser.js";
import { uniqueName } from "../helpers/catalog.js";
import { createActiveCluster, createCluster, tenantWithSimCatalog } from "../helpers/clusters.js";
import { clickButton, confirmInDialog, consoleTests, fieldError, fillIn, newPage } from "../helpers/console-page.js";
import { eventually } from "../helpers/eventually.js";

const test = consoleTests({ clusters: 1, provisioners: 1, metrics: 1, webhooks: 1 });

const navLabels = (page: Page) => page.$$eval("header.top nav a", (links) => links.map((a) => a.textContent ?? ""));

/** The value a chart draws for `series` of `category` (`data-value` of its bar). */
const barValue = (page: Page, chart: string, category: string, series: string) =>
  page.$eval(`[data-chart=${chart}] g[data-category="${category}"] rect[data-series="${series}"]`, (el) => Number(el.getAttribute("data-value")));

test("the superadmin creates, edits and deletes a tenant; the server's 400s and 409s show", async (t) => {
  const { sys } = t.context;
  const name = uniqueName("uitenant");
  const page = await newPage(t);
  await openSignedIn(page, sys.baseUrl, SUPERADMIN, "/admin/tenants");
  await page.waitForSelector(".vtable[aria-label=Tenants] tr[data-key=superadmin]");

  await fillIn(page, "input[name='tenant.name']", name);
  await fillIn(page, "input[name='tenant.workers']", "-1");
  await clickButton(page, "Create tenant");
  t.regex(await fieldError(page, "tenant.workers"), /tenant\.workers/);

  await fillIn(page, "input[name='tenant.name']", name);
  await fillIn(page, "input[name='tenant.workers']", "1");
  await fillIn(page, "input[name='tenant.maxClusters']", "3");
  await fillIn(page, "input[name='tenant.description']", "made in the console");
  await clickButton(page, "Create tenant");
  await waitForText(page, ".tenant-form [role=status]", `Created tenant ${name}`);
  await waitForText(page, `.vtable[aria-label=Tenants] tr[data-key="${name}"]`, "made in the console");
  t.like((await api(sys.baseUrl, "GET", `/tenants/${name}`, SUPERADMIN)).body, { name, workers: 1, maxClusters: 3 });

  // The same name again: the 409 as the server words it.
  await fillIn(page, "input[name='tenant.name']", name);
  await fillIn(page, "input[name='tenant.workers']", "0");
  await clickButton(page, "Create tenant");
  await waitForText(page, ".tenant-form .form-message", "already exists");

  // Its page: deleting it with a worker left is a 409, shown; with workers 0 it goes.
  await page.click(`.vtable[aria-label=Tenants] tr[data-key="${name}"] a`);
  await page.waitForSelector("form.tenant-form input[name='tenant.workers']");
  t.true(await page.$eval("input[name='tenant.name']", (el) => (el as HTMLInputElement).readOnly), "the name is not edited");
  await clickButton(page, "Delete tenant");
  await confirmInDialog(page, "Delete tenant");
  await waitForText(page, ".tenant-form .form-message", "workers");
  t.is((await api(sys.baseUrl, "GET", `/tenants/${name}`, SUPERADMIN)).status, 200, "still there");

  await fillIn(page, "input[name='tenant.workers']", "0");
  await clickButton(page, "Save");
  await waitForText(page, ".tenant-form [role=status]", "Saved.");
  t.is((await api(sys.baseUrl, "GET", `/tenants/${name}`, SUPERADMIN)).body.workers, 0);
  t.is((await api(sys.baseUrl, "GET", `/tenants/${name}`, SUPERADMIN)).body.description, "made in the console", "what the form did not change is kept");
  await clickButton(page, "Delete tenant");
  await confirmInDialog(page, "Delete tenant");
  await page.waitForFunction(() => location.hash === "#/admin/tenants");
  await page.waitForSelector(".vtable[aria-label=Tenants] tr[data-key=superadmin]");
  t.is(await page.$(`.vtable[aria-label=Tenants] tr[data-key="${name}"]`), null);
  await eventually(async () => (await api(sys.baseUrl, "GET", `/tenants/${name}`, SUPERADMIN)).status === 404, { what: `tenant ${name} gone` });
  await page.close();
});

test("the superadmin sees the provisioners and the workers they run for each tenant", async (t) => {
  const { sys } = t.context;
  const tenant = await tenantWithSimCatalog(sys, "uiworkers", { workers: 2 });
  const page = await newPage(t);
  await openSignedIn(page, sys.baseUrl, SUPERADMIN, "/admin/provisioners");
  await waitForText(page, ".vtable[aria-label=Provisioners] tr[data-key=test-p0]", `${tenant.name}: 2`);
  const row = await page.$$eval(`.vtable[aria-label="Workers by tenant"] tr[data-key="${tenant.name}"] td`, (cells) => cells.map((c) => c.textContent));
  t.deepEqual(row.slice(0, 3), [tenant.name, "2", "2"], "asked 2, assigned 2");
  await page.close();
});

test("queue and node-usage charts drawn from real figures", async (t) => {
  const { sys } = t.context;
  // No workers: its tasks wait in the queue. The other runs a cluster, so it has node-seconds.
  const waiting = await tenantWithSimCatalog(sys, "uiqueue", { workers: 0 });
  await createCluster(sys.baseUrl, waiting.user, { name: "waits", clusterTemplate: "webapp", numMachines: 2 });
  const running = await tenantWithSimCatalog(sys, "uiusage", { workers: 2 });
  await createActiveCluster(sys.baseUrl, running.user, { name: "runs", clusterTemplate: "webapp", numMachines: 2 });

  const page = await newPage(t);
  await openSignedIn(page, sys.baseUrl, SUPERADMIN, "/metrics");
  await page.waitForSelector(`[data-chart=queues] svg g[data-category="${waiting.name}"]`);
  const queues = (await api(sys.baseUrl, "GET", "/metrics/queues", SUPERADMIN)).body;
  t.true(queues[waiting.name].queued > 0, "the API counts its waiting tasks");
  await eventually(async () => (await barValue(page, "queues", waiting.name, "queued")) > 0, { what: "the queued bar drawn", timeoutMs: 15_000 });
  t.truthy(await page.$(`[data-chart=queues] g[data-category="${running.name}"]`), "every tenant has a bar");
  t.truthy(await page.$(`[data-chart=queues] details.chart-values tr[data-category="${waiting.name}"]`), "and a row in the values table");

  await page.waitForSelector("[data-chart=usage] svg");
  t.is(await page.$$eval("[data-chart=usage] svg g[data-category]", (bars) => bars.length), 12, "last hour by 5 minutes");
  // The page reads usage once per choice: wait until the metrics service has counted the cluster's nodes.
  await eventually(
    async () => ((await api(sys.baseUrl, "GET", `/metrics/nodes/usage?tenant=${running.name}`, SUPERADMIN)).body?.data?.[0]?.value ?? 0) > 0,
    { what: "the metrics service counting the running cluster's nodes", timeoutMs: 30_000 },
  );
  await page.select("#usage-tenant", running.name);
  await waitForText(page, "[data-chart=usage] figcaption", `Node-hours of tenant ${running.name}`);
  const values = await page.$$eval("[data-chart=usage] rect[data-series=node-hours]", (bars) => bars.map((b) => Number(b.getAttribute("data-value"))));
  t.true((values.at(-1) ?? 0) > 0, "its nodes count in the latest window");
  await page.select("#usage-range", "day");
  await eventually(async () => (await page.$$eval("[data-chart=usage] svg g[data-category]", (bars) => bars.length)) === 24, { what: "24 hourly bars" });
  await page.close();
});

test("a tenant's admin gets no superadmin page, the API refuses them anyway, and its charts show only its tenant", async (t) => {
  const { sys } = t.context;
  const tenant = await tenantWithSimCatalog(sys, "uinotsuper", { workers: 1 });
  const page = await newPage(t);
  await openSignedIn(page, sys.baseUrl, tenant.admin, "/clusters");
  await page.waitForSelector("header.top nav a");
  const labels = await navLabels(page);
  t.true(labels.includes("Metrics") && labels.includes("Catalog"));
  t.false(labels.includes("Tenants") || labels.includes("Provisioners"));
  for (const hash of ["/admin/tenants", "/admin/provisioners", "/admin/tenants/superadmin"]) {
    await openSignedIn(page, sys.baseUrl, tenant.admin, hash);
    await waitForText(page, ".not-allowed", "for the superadmin");
  }
  for (const path of ["/tenants", "/provisioners", "/tenants/superadmin"]) {
    t.is((await api(sys.baseUrl, "GET", path, tenant.admin)).status, 401, path);
  }

  await openSignedIn(page, sys.baseUrl, tenant.admin, "/metrics");
  await page.waitForSelector("[data-chart=queues] svg");
  t.deepEqual(await page.$$eval("[data-chart=queues] svg g[data-category]", (bars) => bars.map((b) => b.getAttribute("data-category"))), [tenant.name]);
  await waitForText(page, "[data-chart=usage] figcaption", `Node-hours of tenant ${tenant.name}`);
  t.is(await page.$("#usage-tenant"), null, "no tenant choice");

  await openSignedIn(page, sys.baseUrl, tenant.user, "/metrics");
  await waitForText(page, ".not-allowed", "admins");
  t.false((await navLabels(page)).includes("Metrics"), "an ordinary user has no metrics page");
  await page.close();
});
