/**
 * Screenshots of the console's main pages for docs/console.md, taken in headless Chromium against a real Corral (sim
 * provider): sign-in, cluster list, create with its dry run, a cluster with a failed action's output, its plan,
 * the list on a phone-sized screen, the services' dependency graph, a template's validation error and the
 * superadmin's metrics charts. Writes docs/console-*.png.
 *
 * Run: node --import=tsx bench/console/screenshots.ts
 */
import { mkdirSync } from "node:fs";
import type { Page } from "puppeteer-core";
import { api, SUPERADMIN } from "../../test/helpers/api.js";
import { consoleOrigin, launchBrowser, openSignedIn, waitForText } from "../../test/helpers/browser.js";
import { createActiveCluster, createCluster, tenantWithSimCatalog, waitForStatus } from "../../test/helpers/clusters.js";
import { clickButton, fillIn } from "../../test/helpers/console-page.js";
import { startSystem } from "../../test/helpers/system.js";

const docs = new URL("../../docs/", import.meta.url);

async function shot(page: Page, name: string): Promise<void> {
  await new Promise((r) => setTimeout(r, 300)); // let the last frame settle
  await page.screenshot({ path: new URL(`console-${name}.png`, docs).pathname as `${string}.png` });
  console.log(`docs/console-${name}.png`);
}

const sys = await startSystem({ clusters: 1, provisioners: 1, metrics: 1 });
const browser = await launchBrowser({ width: 1280, height: 820 });
try {
  mkdirSync(docs, { recursive: true });
  const tenant = await tenantWithSimCatalog(sys, "acme", {
    workers: 4,
    catalog: { scripts: { base: { configure: { script: 'if grep -q BREAK_CONF"IGURE" "$CORRAL_TASK_FILE"; then echo "configure: /etc/app.conf: port 80 already in use" >&2; false; fi' } } } },
  });
  const user = tenant.user;
  for (const [name, template, size] of [["web-frontend", "webapp", 3], ["cache", "webapp", 2], ["reporting", "webapp", 1]] as const) {
    await createActiveCluster(sys.baseUrl, user, { name, clusterTemplate: template, numMachines: size });
  }
  const broken = await createActiveCluster(sys.baseUrl, user, { name: "billing", clusterTemplate: "webapp", numMachines: 3 });
  await api(sys.baseUrl, "PUT", `/clusters/${broken}/config`, { ...user, body: { config: { BREAK_CONFIGURE: true }, restart: false } });
  await waitForStatus(sys.baseUrl, user, broken, "inconsistent");
  await createCluster(sys.baseUrl, user, { name: "staging", clusterTemplate: "webapp", numMachines: 4 });

  const page = await browser.newPage();
  const origin = consoleOrigin(sys.baseUrl);
  await page.goto(`${origin}/`);
  await page.waitForSelector("form.sign-in");
  await page.$eval("#main input[name=user]", (el, value) => ((el as HTMLInputElement).value = value), user.user ?? "");
  await page.$eval("#main input[name=tenant]", (el, value) => ((el as HTMLInputElement).value = value), tenant.name);
  await shot(page, "sign-in");

  await openSignedIn(page, sys.baseUrl, user);
  await page.waitForSelector(".vtable[aria-label=Clusters] tr[data-key]");
  await shot(page, "clusters");

  await page.goto(`${origin}/ui/#/clusters/new`);
  await page.waitForSelector("select[name=clusterTemplate] option[value=webapp]");
  await page.type("input[name=name]", "analytics");
  await page.select("select[name=clusterTemplate]", "webapp");
  await page.$eval("input[name=numMachines]", (el) => ((el as HTMLInputElement).value = "3"));
  await page.click("form button[type=submit]");
  await waitForText(page, "dialog[open]", "Layout");
  await shot(page, "create-dry-run");
  await page.keyboard.press("Escape");

  await page.goto(`${origin}/ui/#/clusters/${encodeURIComponent(broken)}`);
  await waitForText(page, "[data-testid=cluster-status]", "inconsistent");
  await page.waitForSelector(".vtable[aria-label=Nodes] tbody tr[data-key]");
  await shot(page, "cluster");
  await page.click(".vtable[aria-label=Nodes] tbody tr[data-key] button");
  await waitForText(page, ".node-detail pre.output", "already in use");
  await page.evaluate(() => document.querySelector(".node-detail pre.output")?.scrollIntoView({ block: "center" }));
  await shot(page, "failed-action");
  await page.click("#tab-Plan");
  await page.waitForSelector(".stages");
  await shot(page, "plan");

  await openSignedIn(page, sys.baseUrl, tenant.admin, "/catalog/services");
  await page.waitForSelector("svg.dependency-graph .node");
  await page.$eval("svg.dependency-graph a.node[data-service=node-app]", (el: Element) => (el as SVGElement).focus());
  await shot(page, "catalog-services");
  await openSignedIn(page, sys.baseUrl, tenant.admin, "/catalog/clustertemplates/webapp");
  await page.waitForSelector("input[name='defaults.services']");
  await fillIn(page, "input[name='defaults.services']", "base, nginx, kube-apiserver");
  await clickButton(page, "Save");
  await page.waitForSelector(".field.invalid");
  await page.evaluate(() => document.querySelector(".field.invalid")?.scrollIntoView({ block: "center" }));
  await shot(page, "catalog-template-error");

  // A tenant without workers: its tasks wait, so the queue chart has something to draw.
  const waiting = await tenantWithSimCatalog(sys, "globex", { workers: 0 });
  await createCluster(sys.baseUrl, waiting.user, { name: "queued", clusterTemplate: "webapp", numMachines: 3 });
  await openSignedIn(page, sys.baseUrl, SUPERADMIN, "/metrics");
  await page.waitForSelector(`[data-chart=queues] g[data-category="${waiting.name}"]`);
  await page.waitForSelector("[data-chart=usage] svg");
  await page.setViewport({ width: 1280, height: 1060 }); // both charts
  await shot(page, "metrics");
  await page.setViewport({ width: 1280, height: 820 });
  await openSignedIn(page, sys.baseUrl, user);

  await page.setViewport({ width: 390, height: 800 });
  await page.goto(`${origin}/ui/#/clusters`);
  await page.waitForSelector(".vtable[aria-label=Clusters] tr[data-key]");
  await shot(page, "narrow");
} finally {
  await browser.close();
  await sys.stop();
}
