/**
 * The web console in real headless Chromium against a real Corral (sim provider): sign in, create a cluster
 * through the form, watch it become active without a reload, configure it into a failure and read the failed
 * action's output, delete it; the plan tab shows a started stage's tasks running; server validation errors beside
 * their field; nothing of another tenant shows.
 */
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "puppeteer-core";
import { api } from "../helpers/api.js";
import { consoleOrigin, openSignedIn, waitForText } from "../helpers/browser.js";
import { createActiveCluster, createCluster, tenantWithSimCatalog, type E2eTenant, type SimCatalogOptions } from "../helpers/clusters.js";
import { clickButton, clickRow, confirmInDialog, consoleTests, newPage } from "../helpers/console-page.js";
import { fixtureTemplate } from "../helpers/fixture-catalog.js";

// Each test's tenant gets 2 workers: the one provisioner runs 20 at most, for every tenant of this file.
const test = consoleTests({ clusters: 1, provisioners: 1, simSecured: true });

/** `base`'s configure fails, with output, when the cluster config holds BREAK_CONFIGURE (split so the task file's copy of the script does not match). */
const breakableConfigure: SimCatalogOptions = {
  scripts: { base: { configure: { script: 'if grep -q BREAK_CONF"IGURE" "$CORRAL_TASK_FILE"; then echo "configure refused by the test" >&2; false; fi' } } },
};

test("the console is served at / and /ui/ without identity; files by exact name only", async (t) => {
  const origin = consoleOrigin(t.context.sys.baseUrl);
  for (const path of ["/", "/ui/", "/ui"]) {
    const res = await fetch(origin + path);
    t.is(res.status, 200, path);
    t.regex(res.headers.get("content-type") ?? "", /^text\/html/, path);
    t.regex(res.headers.get("content-security-policy") ?? "", /default-src 'self'/);
    t.regex(await res.text(), /<script type="module" src="\/ui\/console.js">/);
  }
  const script = await fetch(`${origin}/ui/console.js`);
  t.is(script.status, 200);
  t.regex(script.headers.get("content-type") ?? "", /^text\/javascript/);
  t.is(script.headers.get("cache-control"), "no-cache");
  t.true((await script.text()).length > 1000);
  t.regex((await fetch(`${origin}/ui/console.css`)).headers.get("content-type") ?? "", /^text\/css/);
  for (const path of ["/ui/../package.json", "/ui/%2e%2e/package.json", "/ui/..%2fpackage.json", "/ui/src/main.ts", "/ui/nothing.js"]) {
    const res = await fetch(origin + path);
    t.is(res.status, 404, path);
    t.is((await res.json()).error, "not_found", path);
  }
});

test("sign in, create a cluster through the form, watch it become active, fail a configure and read its output, delete it", async (t) => {
  const tenant = await tenantWithSimCatalog(t.context.sys, "uiflow", { workers: 2, catalog: breakableConfigure });
  const page = await newPage(t);
  const origin = consoleOrigin(t.context.sys.baseUrl);
  await page.goto(`${origin}/`);
  await page.waitForSelector("form.sign-in");
  await page.$eval("#main input[name=user]", (el) => ((el as HTMLInputElement).value = ""));
  await page.type("#main input[name=user]", "alice");
  await page.$eval("#main input[name=tenant]", (el) => ((el as HTMLInputElement).value = ""));
  await page.type("#main input[name=tenant]", tenant.name);
  await clickButton(page, "Sign in");
  await waitForText(page, "[data-testid=identity]", `alice @ ${tenant.name}`);
  await page.waitForSelector(".cluster-list");

  await page.click("a[href='#/clusters/new']");
  await page.waitForSelector("select[name=clusterTemplate] option[value=webapp]");
  await page.type("input[name=name]", "ui-web");
  await page.select("select[name=clusterTemplate]", "webapp");
  await page.$eval("input[name=numMachines]", (el) => ((el as HTMLInputElement).value = "2"));
  await clickButton(page, "Preview and create");
  await waitForText(page, "dialog[open]", "Layout: 2 nodes");
  await waitForText(page, "dialog[open] .stages", "Stage 1");
  await confirmInDialog(page, "Create");
  await page.waitForFunction(() => /^#\/clusters\/[^/]+$/.test(location.hash) && location.hash !== "#/clusters/new");
  const id = decodeURIComponent((await page.evaluate(() => location.hash)).split("/")[2] ?? "");
  // A marker that a reload would wipe: the status must turn active while it stays.
  await page.evaluate(() => ((window as unknown as { stillThisPage: boolean }).stillThisPage = true));
  await waitForText(page, "[data-testid=cluster-status]", "active", 60_000);
  t.true(await page.evaluate(() => (window as unknown as { stillThisPage?: boolean }).stillThisPage === true), "no reload happened");
  await waitForText(page, ".vtable[aria-label=Nodes] tbody", "nginx", 10_000).catch(() => undefined);
  t.is(await page.$$eval(".vtable[aria-label=Nodes] tbody tr[data-key]", (rows) => rows.length), 2, "two nodes listed");

  // Configure into a failure, through the Config tab (dry run first), and read the failed action's output.
  await clickButton(page, "Config");
  await page.waitForSelector(".config-tab textarea");
  await page.$eval(".config-tab textarea", (el) => ((el as HTMLTextAreaElement).value = '{"BREAK_CONFIGURE": true}'));
  await page.click(".config-tab input[name=restart]");
  await clickButton(page, "Configure", ".config-tab");
  await waitForText(page, "dialog[open]", "Dry run");
  await confirmInDialog(page, "Configure");
  await waitForText(page, "[data-testid=cluster-status]", "inconsistent", 60_000);
  await clickButton(page, "Nodes");
  await clickRow(page, ".vtable[aria-label=Nodes] tbody tr[data-key] button");
  await waitForText(page, ".node-detail pre.output", "configure refused by the test");

  // The list shows it, with its status, without a reload.
  await page.click("a[href='#/clusters']");
  await waitForText(page, `.vtable[aria-label=Clusters] tr[data-key="${id}"]`, "inconsistent");

  // Delete it from its page: a destructive dry run, confirmed.
  await clickRow(page, `.vtable[aria-label=Clusters] tr[data-key="${id}"] a`);
  await clickButton(page, "Delete cluster");
  await waitForText(page, "dialog[open]", "Dry run");
  t.truthy(await page.$("dialog[open] button.danger"), "the delete's confirm button is marked destructive");
  await confirmInDialog(page, "Delete cluster ui-web");
  await waitForText(page, "[data-testid=cluster-status]", "terminated", 60_000);
  const status = await api(t.context.sys.baseUrl, "GET", `/clusters/${id}/status`, tenant.user);
  t.is(status.body.status, "terminated");
});

test("the plan tab shows a started stage's tasks as running (its plan.stage announces them), then complete", async (t) => {
  // postgresql's install waits until the test has seen it running: no race with how fast the page opens.
  const gate = await mkdtemp(join(tmpdir(), "corral-ui-gate-"));
  await chmod(gate, 0o755); // actions run as the tenant's own user
  const release = join(gate, "release");
  t.teardown(async () => {
    await writeFile(release, "");
    await rm(gate, { recursive: true, force: true });
  });
  const held = { scripts: { postgresql: { install: { script: `while [ ! -e '${release}' ]; do sleep 0.1; done` } } } };
  const tenant = await tenantWithSimCatalog(t.context.sys, "uirunning", { workers: 2, catalog: held });
  const id = await createCluster(t.context.sys.baseUrl, tenant.user, { name: "held", clusterTemplate: "webapp", numMachines: 1 });
  const page = await newPage(t);
  await openSignedIn(page, t.context.sys.baseUrl, tenant.user, `/clusters/${encodeURIComponent(id)}`);
  await clickButton(page, "Plan");
  await waitForText(page, ".plan-tab .stage.current .badge.state-running", "running", 60_000);
  await writeFile(release, "");
  await waitForText(page, "[data-testid=cluster-status]", "active", 60_000);
  await page.waitForFunction(() => document.querySelector(".plan-tab .stages") !== null && document.querySelector(".plan-tab .badge.state-running") === null);
  t.false(await page.$eval(".plan-tab", (el) => /waiting|running|failed/.test(el.textContent ?? "")), "every task complete");
});

test("a server validation error shows beside the field it names", async (t) => {
  const tenant = await tenantWithSimCatalog(t.context.sys, "uivalid", { workers: 2 });
  const page = await newPage(t);
  await openSignedIn(page, t.context.sys.baseUrl, tenant.user, "/clusters/new");
  await page.waitForSelector("select[name=clusterTemplate] option[value=webapp]");
  await page.type("input[name=name]", "too-many");
  await page.$eval("input[name=numMachines]", (el) => ((el as HTMLInputElement).value = "0"));
  await clickButton(page, "Preview and create");
  await page.waitForSelector(".field.invalid input[name=numMachines]");
  const message = await page.$eval(".field.invalid .field-error", (el) => el.textContent ?? "");
  t.regex(message, /numMachines/);
});

test("provider fields the server asks for get a form from the provider type's parameters; the secret is masked and sent", async (t) => {
  // webapp's default provider, aws-us-east-1, becomes sim-secured: a create must carry the sensitive user field sim_password.
  const tenant = await tenantWithSimCatalog(t.context.sys, "uisecret", { workers: 2, catalog: { providerTypes: { "aws-us-east-1": "sim-secured" } } });
  const page = await newPage(t);
  await openSignedIn(page, t.context.sys.baseUrl, tenant.user, "/clusters/new");
  await page.waitForSelector("select[name=clusterTemplate] option[value=webapp]");
  await page.type("input[name=name]", "with-secret");
  await page.select("select[name=clusterTemplate]", "webapp");
  await clickButton(page, "Preview and create");
  const secret = await page.waitForSelector(".provider-fields input[name=sim_password]");
  t.is(await secret!.evaluate((el) => (el as HTMLInputElement).type), "password", "a sensitive field is a password input");
  t.is(await secret!.evaluate((el) => (el as HTMLInputElement).value), "", "and starts empty");
  await secret!.type("hunter2");
  await clickButton(page, "Preview and create");
  await waitForText(page, "dialog[open]", "Layout: 1 node");
  await confirmInDialog(page, "Create");
  await page.waitForFunction(() => /^#\/clusters\/[^/]+$/.test(location.hash) && location.hash !== "#/clusters/new");
  await waitForText(page, "[data-testid=cluster-status]", "active", 60_000);
  t.false((await page.content()).includes("hunter2"), "the secret is not shown back");
});

test("the lease is extended from the cluster page; a step over the template's limit is refused beside the field", async (t) => {
  // webapp with lease rules: 1 h at first, at most 3 h after creation, at most 1 h per extension.
  const leased = { ...fixtureTemplate("webapp"), name: "webapp-leased", administration: { leaseduration: { initial: "1h", max: "3h", step: "1h" } } };
  const tenant = await tenantWithSimCatalog(t.context.sys, "uilease", { workers: 2, catalog: { extraTemplates: [leased] } });
  const id = await createActiveCluster(t.context.sys.baseUrl, tenant.user, { name: "leased", clusterTemplate: "webapp-leased", numMachines: 1 });
  const before = (await api(t.context.sys.baseUrl, "GET", `/clusters/${id}`, tenant.user)).body.expireTime as number;
  const page = await newPage(t);
  await openSignedIn(page, t.context.sys.baseUrl, tenant.user, `/clusters/${encodeURIComponent(id)}`);
  await page.waitForSelector(".lease form input[name=expireTime]");
  const shown = await page.$eval("[data-testid=lease-end]", (el) => el.textContent ?? "");
  await page.$eval(".lease input[name=expireTime]", (el) => ((el as HTMLInputElement).value = "5"));
  await clickButton(page, "Extend lease");
  await page.waitForSelector(".lease .field.invalid input[name=expireTime]");
  t.regex(await page.$eval(".lease .field-error", (el) => el.textContent ?? ""), /\S/, "the refusal is said beside the field");
  await page.$eval(".lease input[name=expireTime]", (el) => ((el as HTMLInputElement).value = "1"));
  await clickButton(page, "Extend lease");
  await page.waitForFunction((old) => document.querySelector("[data-testid=lease-end]")?.textContent !== old, {}, shown);
  const after = (await api(t.context.sys.baseUrl, "GET", `/clusters/${id}`, tenant.user)).body.expireTime as number;
  t.true(after > before, `lease moved from ${before} to ${after}`);
});

test("the services tab restarts one service and adds another, each after its dry run", async (t) => {
  const tenant = await tenantWithSimCatalog(t.context.sys, "uiservices", { workers: 2 });
  const id = await createActiveCluster(t.context.sys.baseUrl, tenant.user, { name: "svc", clusterTemplate: "webapp", numMachines: 2 });
  const page = await newPage(t);
  await openSignedIn(page, t.context.sys.baseUrl, tenant.user, `/clusters/${encodeURIComponent(id)}`);
  await waitForText(page, "[data-testid=cluster-status]", "active");
  await clickButton(page, "Services");
  await page.click(".service-row[data-service=nginx] button[aria-label='restart nginx']");
  await waitForText(page, "dialog[open]", "Dry run");
  await waitForText(page, "dialog[open] .stages", "nginx");
  await confirmInDialog(page, "Restart nginx");
  await waitForText(page, "[data-testid=cluster-status]", "restart", 30_000);
  await waitForText(page, "[data-testid=cluster-status]", "active");

  await page.type(".services-tab input[name=services]", "redis");
  await clickButton(page, "Add services", ".services-tab form");
  await waitForText(page, "dialog[open]", "redis");
  await confirmInDialog(page, "Add redis");
  await page.waitForSelector(".service-row[data-service=redis]", { timeout: 60_000 });
  await waitForText(page, "[data-testid=cluster-status]", "active", 60_000);
  const services = (await api(t.context.sys.baseUrl, "GET", `/clusters/${id}/services`, tenant.user)).body as string[];
  t.true(services.includes("redis"), `services now ${services.join(", ")}`);
  const plans = (await api(t.context.sys.baseUrl, "GET", `/clusters/${id}/plans`, tenant.user)).body as Array<{ action: string }>;
  t.deepEqual(plans.slice(0, 2).map((p) => p.action), ["ADD_SERVICES", "RESTART_SERVICES"]);
});

/** Presses Tab until the focused element's text is `label` (at most `limit` presses); false when never. */
async function tabTo(page: Page, label: string, limit = 40): Promise<boolean> {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press("Tab");
    if ((await page.evaluate(() => document.activeElement?.textContent?.trim() ?? "")) === label) return true;
  }
  return false;
}

test("the pages work from the keyboard: links and buttons are reached with Tab; a destructive dialog starts on Cancel and Escape closes it", async (t) => {
  const tenant = await tenantWithSimCatalog(t.context.sys, "uikeys", { workers: 2 });
  const id = await createActiveCluster(t.context.sys.baseUrl, tenant.user, { name: "keyed", clusterTemplate: "webapp", numMachines: 1 });
  const page = await newPage(t);
  await openSignedIn(page, t.context.sys.baseUrl, tenant.user);
  await page.waitForSelector(`.vtable[aria-label=Clusters] tr[data-key="${id}"]`);
  t.true(await tabTo(page, "keyed"), "the cluster's link is reached with Tab");
  await page.keyboard.press("Enter");
  await waitForText(page, "[data-testid=cluster-status]", "active");
  t.true(await tabTo(page, "Delete cluster"), "the delete button is reached with Tab");
  await page.keyboard.press("Enter");
  await waitForText(page, "dialog[open]", "Dry run");
  t.is(await page.evaluate(() => document.activeElement?.textContent), "Cancel", "a destructive dialog starts on Cancel");
  await page.keyboard.press("Escape");
  await page.waitForFunction(() => !document.querySelector("dialog[open]"));
  t.is((await api(t.context.sys.baseUrl, "GET", `/clusters/${id}/status`, tenant.user)).body.status, "active", "nothing was deleted");
});

test("an address the console has no page for says so, even one that is not valid percent-encoding", async (t) => {
  const tenant = await tenantWithSimCatalog(t.context.sys, "uinowhere", { workers: 0 });
  const page = await newPage(t);
  for (const hash of ["/no/such/page", "/clusters/%E0%A4%A"]) {
    await openSignedIn(page, t.context.sys.baseUrl, tenant.user, hash);
    await waitForText(page, "main h1", "Not found");
    t.regex(await page.$eval("main", (el) => el.textContent ?? ""), /Go to the clusters/, hash);
  }
});

test("a user of one tenant sees nothing of another", async (t) => {
  const { sys } = t.context;
  const mine: E2eTenant = await tenantWithSimCatalog(sys, "uimine", { workers: 2 });
  const theirs: E2eTenant = await tenantWithSimCatalog(sys, "uitheirs", { workers: 2 });
  const theirId = await createActiveCluster(sys.baseUrl, theirs.user, { name: "secret-cluster-of-theirs", clusterTemplate: "webapp", numMachines: 1 });
  const myId = await createActiveCluster(sys.baseUrl, mine.user, { name: "my-own-cluster", clusterTemplate: "webapp", numMachines: 1 });
  const page = await newPage(t);
  await openSignedIn(page, sys.baseUrl, mine.admin);
  await page.waitForSelector(`.vtable[aria-label=Clusters] tr[data-key="${myId}"]`);
  const listed = await page.$eval(".vtable[aria-label=Clusters] tbody", (el) => el.textContent ?? "");
  t.false(listed.includes("secret-cluster-of-theirs"));
  await page.goto(`${consoleOrigin(sys.baseUrl)}/ui/#/clusters/${encodeURIComponent(theirId)}`);
  await waitForText(page, ".cluster-page .error", `No cluster ${theirId}`);
  const text = await page.$eval("main", (el) => el.textContent ?? "");
  t.false(text.includes("secret-cluster-of-theirs"));
  t.is(await page.$$eval(".vtable[aria-label=Nodes] tbody tr[data-key]", (rows) => rows.length), 0);
});

test("the cluster list follows the event socket: the admin the whole tenant, a user each of its clusters", async (t) => {
  const { sys } = t.context;
  const tenant: E2eTenant = await tenantWithSimCatalog(sys, "uilive", { workers: 2 });
  for (const [who, caller] of [["admin", tenant.admin], ["user", tenant.user]] as const) {
    const page = await newPage(t);
    const cdp = await page.createCDPSession();
    await cdp.send("Network.enable");
    const sent: string[] = [];
    const received: string[] = [];
    const protocols: string[] = [];
    cdp.on("Network.webSocketFrameSent", (e) => sent.push(e.response.payloadData));
    cdp.on("Network.webSocketFrameReceived", (e) => received.push(e.response.payloadData));
    cdp.on("Network.webSocketHandshakeResponseReceived", (e) => protocols.push(String(e.response.headers["Sec-WebSocket-Protocol"] ?? "")));
    // The user's cluster exists before the page opens (a user follows the clusters it lists); the admin's after.
    const early = who === "user" ? await createCluster(sys.baseUrl, caller, { name: `live-${who}`, clusterTemplate: "webapp", numMachines: 1 }) : undefined;
    await openSignedIn(page, sys.baseUrl, caller);
    await page.waitForSelector(".vtable[aria-label=Clusters]");
    const id = early ?? (await createCluster(sys.baseUrl, caller, { name: `live-${who}`, clusterTemplate: "webapp", numMachines: 1 }));
    await waitForText(page, `.vtable[aria-label=Clusters] tr[data-key="${id}"]`, "active", 60_000);
    t.deepEqual(protocols, ["corral.events.v1"], `${who}: the socket opened with its credentials as subprotocols`);
    const subscription = who === "admin" ? { type: "subscribe", tenant: true } : { type: "subscribe", clusterId: id };
    t.true(sent.some((f) => JSON.stringify(JSON.parse(f)) === JSON.stringify(subscription)), `${who}: ${JSON.stringify(sent)}`);
    t.true(received.some((f) => (JSON.parse(f) as { type: string }).type === "event"), `${who}: events arrived on the socket`);
    await page.close();
  }
});
