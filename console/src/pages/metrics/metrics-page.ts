/**
 * `#/metrics` (admins): task queues by tenant (`GET /v2/metrics/queues`, read every 5 s) and node-hours over time
 * (`GET /v2/metrics/nodes/usage`, one window per bar) as charts. A tenant's admin sees its own tenant; the
 * superadmin sees every tenant, and node usage of all tenants or of one.
 */
import type { QueueCounts } from "@corral/contracts";
import { barChart, formatAmount } from "../../components/bar-chart.js";
import { h, replaceChildren } from "../../components/dom.js";
import type { MountedPage, PageContext } from "../../router.js";
import { isSuperadmin } from "../../session.js";
import { adminOnly } from "../admin/restricted.js";
import { USAGE_RANGES, usageBuckets, type UsageRange } from "./usage-windows.js";

const REFRESH_MS = 5_000;
const ALL_TENANTS = "";

function queueChart(queues: Record<string, QueueCounts>): HTMLElement {
  const tenants = Object.keys(queues).sort();
  return barChart({
    title: "Tasks by tenant",
    categories: tenants,
    series: [
      { name: "in progress", values: tenants.map((t) => queues[t]?.inProgress ?? 0) },
      { name: "queued", values: tenants.map((t) => queues[t]?.queued ?? 0) },
    ],
    format: formatAmount,
    empty: "No tenant has a task queue.",
  });
}

function metricsPage(ctx: PageContext): MountedPage {
  const superadmin = isSuperadmin(ctx.session);
  const queueSlot = h("div", { class: "card", "data-chart": "queues" }, h("p", { class: "muted" }, "Loading…"));
  const usageSlot = h("div", { "data-chart": "usage" }, h("p", { class: "muted" }, "Loading…"));
  const problem = h("p", { class: "error", role: "alert" });
  const fail = (what: string) => (err: unknown) => void (problem.textContent = `Could not read ${what}: ${(err as Error).message}`);

  const readQueues = () => ctx.api.call("metrics.queues").then((queues) => replaceChildren(queueSlot, queueChart(queues)), fail("the queues"));

  const range = h("select", { id: "usage-range", "aria-label": "Time range" }, ...USAGE_RANGES.map((r) => h("option", { value: r.id }, r.label)));
  const tenant = h("select", { id: "usage-tenant", "aria-label": "Tenant" }, h("option", { value: ALL_TENANTS }, "All tenants"));
  let usageRun = 0;
  const readUsage = async () => {
    const run = ++usageRun;
    const chosen = USAGE_RANGES.find((r) => r.id === range.value) as UsageRange;
    const buckets = usageBuckets(chosen, Math.floor(Date.now() / 1000));
    const scope: Record<string, string> = tenant.value === ALL_TENANTS ? {} : { tenant: tenant.value };
    try {
      const answers = await Promise.all(
        buckets.map((b) => ctx.api.call("metrics.nodeUsage", { query: { start: String(b.start), end: String(b.end), ...scope } })),
      );
      if (run !== usageRun) return; // a newer choice is being drawn
      const hours = answers.map((a) => (a.data[0]?.value ?? 0) / 3_600);
      const whose = superadmin ? (tenant.value === ALL_TENANTS ? "all tenants" : `tenant ${tenant.value}`) : `tenant ${ctx.session.tenant}`;
      replaceChildren(
        usageSlot,
        barChart({ title: `Node-hours of ${whose}`, categories: buckets.map((b) => b.name), series: [{ name: "node-hours", values: hours }], format: formatAmount, empty: "", timeSeries: true }),
        h("p", { class: "muted" }, `Total: ${formatAmount(hours.reduce((a, b) => a + b, 0))} node-hours.`),
      );
    } catch (err) {
      fail("node usage")(err);
    }
  };
  range.addEventListener("change", () => void readUsage());
  tenant.addEventListener("change", () => void readUsage());
  if (superadmin) {
    void ctx.api.call("tenancy.tenants.list").then(
      (tenants) => tenant.append(...tenants.map((t) => t.name).sort().map((name) => h("option", { value: name }, name))),
      fail("the tenants"),
    );
  }

  void readQueues();
  void readUsage();
  const timer = setInterval(() => void readQueues(), REFRESH_MS);
  const element = h(
    "section",
    { class: "metrics" },
    h("h1", null, "Metrics"),
    problem,
    h("h2", null, "Task queues"),
    queueSlot,
    h("h2", null, "Node usage"),
    h("div", { class: "card" }, h("div", { class: "toolbar" }, range, superadmin ? tenant : null, h("button", { type: "button", onclick: () => void readUsage() }, "Refresh")), usageSlot),
  );
  return { element, dispose: () => clearInterval(timer) };
}

export const metricsPageForAdmins = adminOnly(metricsPage);
