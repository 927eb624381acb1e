/**
 * Day two in the console, in real headless Chromium against a real Corral (`sim`, node health checked every
 * 300 ms): health badges on the nodes tab; adding nodes, removing and replacing one, each through its dry run and
 * confirm dialog; a refused removal shows the server's reason; a rolling restart whose plan stops one node of a
 * service at a time; the audit page for admins, filtered by target and following new entries.
 */
import type { Page } from "puppeteer-core";
import { api } from "../helpers/api.js";
import { openSignedIn, waitForText } from "../helpers/browser.js";
import { createActiveCluster, latestPlan, tenantWithSimCatalog, waitForStatus, type E2eTenant, type PlanBody } from "../helpers/clusters.js";
import { clickButton, clickRow, confirmInDialog, consoleTests, fillIn, newPage } from "../helpers/console-page.js";
import { eventually } from "../helpers/eventually.js";

const test = consoleTests({ clusters: 1, provisioners: 1, metrics: 1, healthIntervalMs: 300 });

/** Every node lists the hosts with `base`: adding, removing or replacing a node changes every peer's config. */
const PEERS_CONFIG = { peers: "%join(host.service.base,',')%" };

interface NodeBody {
  id: string;
  services: string[];
  properties: Record<string, unknown>;
}

const healthChecked = (prefix: string) => (sys: Parameters<typeof tenantWithSimCatalog>[0]) =>
  tenantWithSimCatalog(sys, prefix, { workers: 3, catalog: { providerFields: { health_check: "true" } } });
const nodesOf = async (baseUrl: string, tenant: E2eTenant, id: string): Promise<NodeBody[]> => (await api(baseUrl, "GET", `/clusters/${id}`, tenant.user)).body.nodes;
const rowCount = (page: Page) => page.$$eval(".vtable[aria-label=Nodes] tbody tr[data-key]", (rows) => rows.length);
const waitForRows = (page: Page, n: number) =>
  page.waitForFunction((count) => document.querySelectorAll(".vtable[aria-label=Nodes] tbody tr[data-key]").length === count, { timeout: 60_000, polling: 100 }, n);
const hostOf = (node: NodeBody) => String(node.properties["hostname"] ?? node.id);

test("the nodes tab: health badges; add, remove and replace nodes through dry run and confirm; a refused removal says why", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await healthChecked("uidaytwo")(t.context.sys);
  const id = await createActiveCluster(baseUrl, tenant.user, { name: "daytwo", clusterTemplate: "webapp", numMachines: 3, config: PEERS_CONFIG });
  const page = await newPage(t);
  await openSignedIn(page, baseUrl, tenant.user, `/clusters/${encodeURIComponent(id)}`);
  await page.waitForFunction(() => document.querySelectorAll(".vtable[aria-label=Nodes] [data-health=healthy]").length === 3, { timeout: 30_000, polling: 100 });

  // Add a node: its form, the dry run's layout, then the confirm.
  await page.click(".add-nodes summary");
  await fillIn(page, ".add-nodes input[name=numMachines]", "1");
  await clickButton(page, "Add nodes", ".add-nodes");
  await waitForText(page, "dialog[open]", "Layout: 4 nodes");
  await waitForText(page, "dialog[open]", "ADD_NODES");
  await confirmInDialog(page, "Add 1 node");
  await waitForRows(page, 4);
  await waitForStatus(baseUrl, tenant.user, id, "active", 60_000);
  await page.waitForFunction(() => document.querySelectorAll(".vtable[aria-label=Nodes] [data-health=healthy]").length === 4, { timeout: 30_000, polling: 100 });

  // The only database cannot go: the dry run's 409 is shown as the server words it, and nothing changes.
  const nodes = await nodesOf(baseUrl, tenant, id);
  const database = nodes.find((n) => n.services.includes("postgresql"))!;
  await clickRow(page, `button[aria-label="Remove ${hostOf(database)}"]`);
  await waitForText(page, "dialog[open]", "refused (HTTP 409)");
  await waitForText(page, "dialog[open] .error", "requires sql-database");
  await confirmInDialog(page, "OK");
  t.is((await nodesOf(baseUrl, tenant, id)).length, 4);

  // Remove another node: destructive, so its confirm button is red.
  const leaving = nodes.filter((n) => !n.services.includes("postgresql")).at(-1)!;
  await clickRow(page, `button[aria-label="Remove ${hostOf(leaving)}"]`);
  await waitForText(page, "dialog[open]", "Layout: 3 nodes");
  t.truthy(await page.$("dialog[open] button.danger"), "the removal's confirm button is marked destructive");
  await confirmInDialog(page, `Remove node ${hostOf(leaving)}`);
  await waitForRows(page, 3);
  await waitForStatus(baseUrl, tenant.user, id, "active", 60_000);
  t.false((await nodesOf(baseUrl, tenant, id)).some((n) => n.id === leaving.id), "the node left the cluster");

  // Replace the database's node: a new machine with the same services, the old one gone.
  await clickRow(page, `button[aria-label="Replace ${hostOf(database)}"]`);
  await waitForText(page, "dialog[open]", "REPLACE_NODE");
  await confirmInDialog(page, `Replace node ${hostOf(database)}`);
  await page.waitForFunction((key) => !document.querySelector(`.vtable[aria-label=Nodes] tr[data-key="${key}"]`), { timeout: 60_000, polling: 100 }, database.id);
  await waitForStatus(baseUrl, tenant.user, id, "active", 60_000);
  const after = await nodesOf(baseUrl, tenant, id);
  t.is(after.length, 3);
  t.true(after.some((n) => n.id !== database.id && n.services.includes("postgresql")), "a new node holds the database");
  await waitForRows(page, 3);
  t.is(await rowCount(page), 3);
});

test("restart all, rolling with at most one node down: the dry run and the plan stop one node of a service at a time", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await healthChecked("uirolling")(t.context.sys);
  const id = await createActiveCluster(baseUrl, tenant.user, { name: "rolling", clusterTemplate: "webapp", numMachines: 3 });
  const page = await newPage(t);
  await openSignedIn(page, baseUrl, tenant.user, `/clusters/${encodeURIComponent(id)}`);
  await waitForText(page, "[data-testid=cluster-status]", "active");
  await clickButton(page, "Restart all", ".operations");
  await waitForText(page, "dialog[open]", "How should the nodes restart?");
  await page.click("dialog[open] input[name=rolling]");
  await fillIn(page, "dialog[open] input[name=maxUnavailable]", "1");
  await confirmInDialog(page, "Preview");
  await waitForText(page, "dialog[open]", "Dry run");
  // nginx runs on all three nodes: each stage that stops it stops it on one node.
  const nginxStops = await page.$$eval("dialog[open] .stages > li .task-group", (groups) =>
    groups.filter((g) => g.querySelector(".task-name")?.textContent === "STOP nginx").map((g) => g.textContent ?? ""),
  );
  t.is(nginxStops.length, 3, JSON.stringify(nginxStops));
  t.true(nginxStops.every((text) => /^STOP nginx1 waiting$/.test(text)), `one nginx stopped per stage: ${JSON.stringify(nginxStops)}`);
  await confirmInDialog(page, "Restart all services");
  const plan = await eventually(
    async () => {
      const latest = (await latestPlan(baseUrl, tenant.user, id)) as PlanBody & { status: string };
      return latest.action === "RESTART_SERVICES" && latest.status === "succeeded" ? latest : false;
    },
    { what: "the rolling restart's plan succeeded", timeoutMs: 60_000 },
  );
  for (const stage of plan.stages) {
    const stopped = stage.filter((task) => task.taskName === "STOP").map((task) => task.service);
    t.is(new Set(stopped).size, stopped.length, `at most one node of a service stopped at a time: ${JSON.stringify(stage)}`);
  }

  // The services tab's restart buttons follow the choice above the list.
  await clickButton(page, "Services");
  await page.click(".restart-mode input[name=rolling]");
  await fillIn(page, ".restart-mode input[name=maxUnavailable]", "1");
  await page.click(".service-row[data-service=nginx] button[aria-label='restart nginx']");
  await waitForText(page, "dialog[open]", "Dry run");
  const serviceStops = await page.$$eval("dialog[open] .stages > li .task-group", (groups) =>
    groups.filter((g) => g.querySelector(".task-name")?.textContent === "STOP nginx").map((g) => g.textContent ?? ""),
  );
  t.deepEqual(serviceStops, ["STOP nginx1 waiting", "STOP nginx1 waiting", "STOP nginx1 waiting"]);
  await page.keyboard.press("Escape");
});

test("the audit page: an admin's entries newest first, filtered by target, following new ones; a user is told it is not theirs", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithSimCatalog(t.context.sys, "uiaudit", { workers: 2 });
  const id = await createActiveCluster(baseUrl, tenant.user, { name: "audited", clusterTemplate: "webapp", numMachines: 1 });
  const page = await newPage(t);
  await openSignedIn(page, baseUrl, tenant.admin, "/clusters");
  await page.waitForSelector("header.top nav a[href='#/audit']");
  await page.click("header.top nav a[href='#/audit']");
  await waitForText(page, ".vtable[aria-label='Audit log'] tbody", "clusters.create", 30_000);

  // The cluster page's link opens the log filtered by the cluster: only its entries.
  await openSignedIn(page, baseUrl, tenant.admin, `/clusters/${encodeURIComponent(id)}`);
  await clickRow(page, ".facts-card a[href^='#/audit?']");
  await page.waitForFunction((target) => (document.querySelector(".audit-filters input[name=target]") as HTMLInputElement | null)?.value === target, {}, id);
  await page.waitForFunction(
    (target) => {
      const rows = [...document.querySelectorAll(".vtable[aria-label='Audit log'] tbody tr[data-key]")];
      return rows.length > 0 && rows.every((r) => (r.textContent ?? "").includes(target));
    },
    { timeout: 30_000, polling: 200 },
    id,
  );

  // Following: a configure made elsewhere shows up on top without pressing Show.
  await page.click("#audit-follow");
  const configured = await api(baseUrl, "PUT", `/clusters/${id}/config`, { ...tenant.user, body: { config: { audited: true }, restart: false } });
  t.is(configured.status, 200, configured.text);
  await waitForText(page, ".vtable[aria-label='Audit log'] tbody", "clusters.putConfig", 30_000);
  const rowOf = (action: string) =>
    page.$$eval(".vtable[aria-label='Audit log'] tbody tr[data-key]", (rows, a) => rows.findIndex((r) => (r.textContent ?? "").includes(a)), action);
  t.true((await rowOf("clusters.putConfig")) < (await rowOf("clusters.create")), "the new entry is above the older one");

  const user = await newPage(t);
  await openSignedIn(user, baseUrl, tenant.user, "/audit");
  await waitForText(user, ".not-allowed", "This page is for admins");
  t.false((await user.$$eval("header.top nav a", (links) => links.map((a) => a.textContent ?? ""))).includes("Audit"));
});
