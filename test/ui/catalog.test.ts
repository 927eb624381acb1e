/**
 * The console's catalog pages in real headless Chromium against a real Corral: a template edited into a
 * validation error shows it beside the field it names (and a good edit is stored), a service created through
 * the form appears in the dependency graph at its level, the catalog exported in one tenant and imported in
 * another arrives whole, and a user who is not the admin reads but cannot change.
 */
import { api } from "../helpers/api.js";
import { openSignedIn, waitForText } from "../helpers/browser.js";
import { createTenant, exportCatalog } from "../helpers/catalog.js";
import { tenantWithSimCatalog } from "../helpers/clusters.js";
import { clickButton, confirmInDialog, consoleTests, fieldError, fillIn, newPage } from "../helpers/console-page.js";

const test = consoleTests({ provisioners: 1 });

test("editing a template: the server's validation error shows beside the field it names; a good edit is stored", async (t) => {
  const { sys } = t.context;
  const tenant = await tenantWithSimCatalog(sys, "uitpl", { workers: 0 });
  const page = await newPage(t);
  await openSignedIn(page, sys.baseUrl, tenant.admin, "/catalog/clustertemplates/webapp");
  await page.waitForSelector("form.entity-form input[name='defaults.services']");

  // A default service the template does not allow: the server names defaults.services[...].
  await fillIn(page, "input[name='defaults.services']", "base, nginx, kube-apiserver");
  await clickButton(page, "Save");
  const error = await fieldError(page, "defaults.services");
  t.regex(error, /defaults\.services/);
  t.regex(error, /kube-apiserver/);
  t.is(await page.$$eval(".field.invalid", (els) => els.length), 1, "only that field is marked");
  t.is(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name), "defaults.services", "focus moves to it");

  // JSON that does not parse is named the same way, before anything is sent.
  await fillIn(page, "input[name='defaults.services']", "base, nginx");
  await fillIn(page, "textarea[name=constraints]", "{ size: 2 }");
  await clickButton(page, "Save");
  t.regex(await fieldError(page, "constraints"), /constraints is not valid JSON/);

  // Fixed: stored, with what the form does not show kept.
  await fillIn(page, "textarea[name=constraints]", '{"size": {"min": 1, "max": 5}}');
  await fillIn(page, "input[name=description]", "Web app, edited in the console");
  await clickButton(page, "Save");
  await waitForText(page, "form.entity-form [role=status]", "Saved.");
  const stored = await api(sys.baseUrl, "GET", "/clustertemplates/webapp", tenant.user);
  t.is(stored.body.description, "Web app, edited in the console");
  t.deepEqual(stored.body.defaults.services, ["base", "nginx"]);
  t.deepEqual(stored.body.constraints.size, { min: 1, max: 5 });
  t.truthy(stored.body.defaults.config, "the default config is kept");
  await page.close();
});

test("a service created through the form appears in the dependency graph, one level above what it requires", async (t) => {
  const { sys } = t.context;
  const tenant = await tenantWithSimCatalog(sys, "uisvc", { workers: 0 });
  const page = await newPage(t);
  await openSignedIn(page, sys.baseUrl, tenant.admin, "/catalog/services");
  await page.waitForSelector("svg.dependency-graph .node[data-service=node-app]");
  const levelOf = (name: string) => page.$eval(`svg.dependency-graph .node[data-service="${name}"]`, (el) => Number(el.getAttribute("data-level")));
  const appLevel = await levelOf("node-app");
  t.is(await levelOf("base"), 0, "base depends on nothing");
  t.true(appLevel > (await levelOf("node-exporter")), "what it uses below what it requires, so the level follows the requirement");

  await page.click("a[href='#/catalog/new/services']");
  await page.waitForSelector("form.entity-form input[name=name]");
  await fillIn(page, "input[name=name]", "node-worker");
  await fillIn(page, "input[name=description]", "A background worker of the Node.js app");
  await fillIn(page, "input[name='dependencies.runtime.requires']", "node-app");
  await fillIn(page, "input[name='dependencies.install.uses']", "node-exporter");
  await fillIn(page, "input[name='dependencies.conflicts']", "apache-httpd");
  // No actions yet: the server's 400 names the field.
  await clickButton(page, "Create service");
  t.regex(await fieldError(page, "provisioner.actions"), /provisioner/);
  await fillIn(page, "textarea[name='provisioner.actions']", '{"install": {"type": "shell", "fields": {"script": "echo"}}}');
  await clickButton(page, "Create service");
  await page.waitForFunction(() => location.hash === "#/catalog/services/node-worker");
  t.deepEqual((await api(sys.baseUrl, "GET", "/services/node-worker", tenant.user)).body.dependencies.runtime.requires, ["node-app"]);

  await page.click(".crumbs a[href='#/catalog/services']");
  await page.waitForSelector("svg.dependency-graph .node[data-service=node-worker]");
  t.is(await levelOf("node-worker"), appLevel + 1);
  const edge = (from: string, to: string, kind: string) => `svg.dependency-graph path.edge[data-from="${from}"][data-to="${to}"][data-kind=${kind}]`;
  t.truthy(await page.$(edge("node-worker", "node-app", "requires")), "an arrow to what it requires");
  t.truthy(await page.$(edge("node-worker", "node-exporter", "uses")), "a dashed one to what it uses");
  t.truthy(await page.$(edge("apache-httpd", "node-worker", "conflicts")), "and its conflict (drawn between the two names in order)");
  t.is(await page.$eval("svg.dependency-graph a.node[data-service=node-worker]", (el) => el.getAttribute("href")), "#/catalog/services/node-worker", "each service links to its page");
  t.truthy(await page.$(".vtable[aria-label=Services] tr[data-key=node-worker]"), "and it is listed");
  await page.close();
});

test("the catalog exported in one tenant and imported in another arrives whole", async (t) => {
  const { sys } = t.context;
  const source = await tenantWithSimCatalog(sys, "uiexport", { workers: 0 });
  const target = await createTenant(sys.baseUrl, "uiimport");
  const page = await newPage(t);

  await openSignedIn(page, sys.baseUrl, source.admin, "/catalog");
  await waitForText(page, ".kinds .count[data-kind=services]", "29");
  await clickButton(page, "Export");
  await waitForText(page, ".transfer [role=status]", "Exported");
  const exported = await page.$eval(".transfer textarea", (el) => (el as HTMLTextAreaElement).value);
  t.deepEqual(JSON.parse(exported), await exportCatalog(sys.baseUrl, source.admin), "the text is the export");
  t.regex((await page.$eval(".transfer a.download", (el) => el.getAttribute("download"))) ?? "", new RegExp(`corral-catalog-${source.name}\\.json`));

  await openSignedIn(page, sys.baseUrl, target.admin, "/catalog");
  await waitForText(page, ".kinds .count[data-kind=services]", "0");
  // Not JSON: said beside the box, nothing sent.
  await fillIn(page, ".transfer textarea", "{ not json");
  await clickButton(page, "Import");
  t.regex(await fieldError(page, "catalog"), /not valid JSON/);

  await fillIn(page, ".transfer textarea", exported);
  await clickButton(page, "Import");
  await waitForText(page, "dialog[open]", "29 services");
  t.truthy(await page.$("dialog[open] button.danger"), "replacing the catalog is confirmed with a red button");
  await confirmInDialog(page, "Replace the catalog");
  await waitForText(page, ".transfer [role=status]", "Imported");
  await waitForText(page, ".kinds .count[data-kind=services]", "29");
  t.deepEqual(await exportCatalog(sys.baseUrl, target.admin), JSON.parse(exported));
  await page.close();
});

test("a user who is not the tenant's admin reads the catalog but gets no way to change it", async (t) => {
  const { sys } = t.context;
  const tenant = await tenantWithSimCatalog(sys, "uiread", { workers: 0 });
  const page = await newPage(t);
  await openSignedIn(page, sys.baseUrl, tenant.user, "/catalog/services/base");
  await page.waitForSelector("form.entity-form input[name=name]");
  t.true(await page.$eval("form.entity-form input[name=description]", (el) => (el as HTMLInputElement).disabled));
  t.is(await page.$("form.entity-form button[type=submit]"), null);
  await openSignedIn(page, sys.baseUrl, tenant.user, "/catalog");
  await page.waitForSelector(".transfer");
  t.is(await page.$(".transfer button.danger"), null, "no import");
  t.is((await api(sys.baseUrl, "POST", "/import", { ...tenant.user, body: {} })).status, 403, "and the API refuses it anyway");
  await page.close();
});
