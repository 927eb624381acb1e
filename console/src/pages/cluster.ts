/**
 * One cluster: facts and lease, buttons for every operation (dry run first), and tabs for nodes (health, add,
 * remove, replace), services, config and the running plan. The event stream keeps it current: task and stage events redraw the plan at once,
 * status, stage, lease and node health events read the cluster again (at most one read at a time).
 */
import type { ClusterDetails, ClusterStreamEvent, PlanView } from "@corral/contracts";
import { ApiError } from "../api.js";
import { formatTime, h, replaceChildren } from "../components/dom.js";
import { runOperation } from "../components/operation.js";
import { planStages } from "../components/plan-stages.js";
import { askRestartMode } from "../components/rolling-restart.js";
import { progressText, statusBadge } from "../components/status-badge.js";
import { watchCluster, type Feed } from "../events.js";
import { auditPath, HOME_PATH } from "../paths.js";
import type { MountedPage, PageContext } from "../router.js";
import { isTenantAdmin } from "../session.js";
import { configTab } from "./cluster/config-tab.js";
import { leaseCard } from "./cluster/lease-card.js";
import { nodesTab } from "./cluster/nodes-tab.js";
import { servicesTab } from "./cluster/services-tab.js";
import { TaskStates } from "./cluster/task-states.js";

const TABS = ["Nodes", "Services", "Config", "Plan"] as const;
type Tab = (typeof TABS)[number];

/** Events after which the cluster is read again (task events only move the plan's task states; reads coalesce). */
const REREAD_ON = new Set<ClusterStreamEvent["type"]>(["cluster.status", "plan.stage", "plan.finished", "lease.changed", "node.health"]);

export function clusterPage(ctx: PageContext): MountedPage {
  const id = ctx.params["id"] ?? "";
  const { api } = ctx;
  const states = new TaskStates();
  let cluster: ClusterDetails | undefined;
  let plan: PlanView | undefined;
  let tab: Tab = "Nodes";
  let shownServicesKey = "";
  let shownConfigKey = "";

  const title = h("h1", null, `Cluster ${id}`);
  const facts = h("div", { class: "card facts-card" });
  const toolbar = h("div", { class: "toolbar operations", role: "group", "aria-label": "Operations" });
  const problem = h("p", { class: "error", role: "alert" });
  const nodes = nodesTab(api, () => void reread());
  const panels: Record<Tab, HTMLElement> = {
    Nodes: nodes.element,
    Services: h("div"),
    Config: h("div"),
    Plan: h("div", { class: "plan-tab" }),
  };
  const tabButtons = TABS.map((name) =>
    h("button", { type: "button", role: "tab", id: `tab-${name}`, "aria-controls": `panel-${name}`, onclick: () => selectTab(name) }, name),
  );
  const panelHost = h("div", { role: "tabpanel" });
  const selectTab = (name: Tab) => {
    tab = name;
    tabButtons.forEach((b, i) => b.setAttribute("aria-selected", String(TABS[i] === name)));
    panelHost.id = `panel-${name}`;
    panelHost.setAttribute("aria-labelledby", `tab-${name}`);
    replaceChildren(panelHost, panels[name]);
    if (name === "Plan") drawPlan();
  };

  // Drawn only while its tab shows (a 10,000-node plan is 30,000 tasks to count); selecting the tab draws it.
  const drawPlan = () => {
    if (tab !== "Plan") return;
    replaceChildren(
      panels.Plan,
      plan
        ? h(
            "div",
            null,
            h("p", null, `${plan.action} · ${plan.status} · stage ${Math.min(plan.currentStage + 1, plan.stages.length)} of ${plan.stages.length} · started ${formatTime(plan.createTime)}`),
            planStages(states.stagesOf(plan), plan.status === "succeeded" ? undefined : plan.currentStage),
          )
        : h("p", { class: "muted" }, "No plan yet."),
    );
  };

  const operationButton = (label: string, run: () => Promise<{ done: boolean }>, options: { danger?: boolean } = {}) =>
    h(
      "button",
      {
        type: "button",
        class: options.danger ? "danger" : undefined,
        onclick: async () => {
          if ((await run()).done) void reread();
        },
      },
      label,
    );

  const drawToolbar = (c: ClusterDetails) => {
    if (c.status === "terminated") return replaceChildren(toolbar, h("a", { href: `#${HOME_PATH}` }, "Back to the clusters"));
    const providerType = c.provider.providertype;
    const params = { id: c.id };
    replaceChildren(
      toolbar,
      operationButton("Start all", () => runOperation(api, { title: "Start all services", endpoint: "clusters.startServices", params, providerType })),
      operationButton("Stop all", () => runOperation(api, { title: "Stop all services", endpoint: "clusters.stopServices", params, providerType, destructive: true })),
      operationButton("Restart all", async () => {
        const title = "Restart all services";
        const body = await askRestartMode(title);
        return body ? runOperation(api, { title, endpoint: "clusters.restartServices", params, body, providerType, destructive: true }) : { done: false };
      }),
      operationButton("Configure…", async () => (selectTab("Config"), { done: false })),
      operationButton("Add nodes…", async () => (selectTab("Nodes"), nodes.openAddNodes(), { done: false })),
      operationButton("Add services…", async () => (selectTab("Services"), { done: false })),
      operationButton("Delete cluster", () => runOperation(api, { title: `Delete cluster ${c.name}`, endpoint: "clusters.delete", params, providerType, destructive: true }), {
        danger: true,
      }),
    );
  };

  const draw = (c: ClusterDetails) => {
    title.textContent = `${c.name}`;
    document.title = `${c.name} · Corral`;
    replaceChildren(
      facts,
      h(
        "dl",
        { class: "facts" },
        h("dt", null, "Status"),
        h("dd", { "data-testid": "cluster-status" }, statusBadge(c.status), " ", progressText(c.progress)),
        h("dt", null, "Id"),
        h("dd", null, c.id),
        h("dt", null, "Template"),
        h("dd", null, c.clusterTemplate.name),
        h("dt", null, "Provider"),
        h("dd", null, `${c.provider.name} (${c.provider.providertype})`),
        h("dt", null, "Owner"),
        h("dd", null, c.ownerId),
        h("dt", null, "Created"),
        h("dd", null, formatTime(c.createTime)),
        h("dt", null, "Nodes"),
        h("dd", null, String(c.nodes.length)),
        ...(isTenantAdmin(ctx.session) ? [h("dt", null, "Audit"), h("dd", null, h("a", { href: `#${auditPath({ target: c.id })}` }, "Who did what to this cluster"))] : []),
      ),
      leaseCard(api, c, () => void reread()),
    );
    drawToolbar(c);
    nodes.update(c);
    // Rebuilt only when what they show changed, so a refresh does not throw away what the user is typing.
    const servicesKey = `${c.status}|${c.services.join(",")}`;
    if (servicesKey !== shownServicesKey) replaceChildren(panels.Services, servicesTab(api, c, () => void reread()));
    shownServicesKey = servicesKey;
    const configKey = `${c.status}|${JSON.stringify(c.config)}`;
    if (configKey !== shownConfigKey) replaceChildren(panels.Config, configTab(api, c, () => void reread()));
    shownConfigKey = configKey;
  };

  const mountedAt = Date.now();
  let reading: Promise<void> | undefined;
  let readAgain = false;
  const reread = async (): Promise<void> => {
    if (reading) {
      readAgain = true;
      return reading;
    }
    reading = (async () => {
      try {
        // The nodes are drawn before the plan is read: on a large cluster both are megabytes.
        const details = await api.call("clusters.get", { params: { id } });
        cluster = details;
        states.learnHistory(details);
        problem.textContent = "";
        draw(details);
        const planId = details.jobs[details.jobs.length - 1];
        plan = planId ? await api.call("clusters.plan", { params: { id, planId } }) : undefined;
        drawPlan();
        if (!disposed) feed ??= follow();
      } catch (err) {
        problem.textContent = err instanceof ApiError && err.status === 404 ? `No cluster ${id} (or not yours to see).` : `Could not read the cluster: ${(err as Error).message}`;
      }
    })();
    await reading;
    reading = undefined;
    if (readAgain) {
      readAgain = false;
      await reread();
    }
  };

  let planFrame = 0;
  // Opened after the first read, so replaying the cluster's history does not compete with drawing it.
  let feed: Feed | undefined;
  let disposed = false;
  const follow = () =>
    watchCluster(
      api,
      id,
      (event) => {
        if (states.apply(event) && !planFrame) {
          planFrame = requestAnimationFrame(() => {
            planFrame = 0;
            drawPlan();
          });
        }
        // The stream replays the cluster's history first; only what happens after the page opened needs another read.
        if (REREAD_ON.has(event.type) && cluster && event.at >= mountedAt) void reread();
      },
      () => {},
    );

  selectTab("Nodes");
  void reread();
  const element = h(
    "section",
    { class: "cluster-page" },
    h("p", null, h("a", { href: `#${HOME_PATH}` }, "← Clusters")),
    title,
    problem,
    facts,
    toolbar,
    h("div", { class: "tabs", role: "tablist", "aria-label": "Cluster" }, ...tabButtons),
    panelHost,
  );
  const dispose = () => {
    disposed = true;
    feed?.stop();
    cancelAnimationFrame(planFrame);
  };
  return { element, dispose };
}
