/** The cluster's services, each with start, stop and restart (all at once, or rolling as chosen above the list), and a form to add services (every button dry-runs first). */
import type { ClusterDetails } from "@corral/contracts";
import type { Api } from "../../api.js";
import { h } from "../../components/dom.js";
import { field } from "../../components/form.js";
import { runOperation } from "../../components/operation.js";
import { rollingChoice } from "../../components/rolling-restart.js";

const SERVICE_OPS = [
  { verb: "start", endpoint: "clusters.startServices", destructive: false },
  { verb: "stop", endpoint: "clusters.stopServices", destructive: true },
  { verb: "restart", endpoint: "clusters.restartServices", destructive: true },
] as const;

export function servicesTab(api: Api, cluster: ClusterDetails, changed: () => void): HTMLElement {
  const providerType = cluster.provider.providertype;
  const live = cluster.status !== "terminated";
  // How the restart buttons restart: every node of the service at once, or rolling.
  const restartMode = rollingChoice();
  const rows = cluster.services.map((service) =>
    h(
      "li",
      { class: "service-row", dataset: { service } },
      h("span", { class: "service-name" }, service),
      ...SERVICE_OPS.map((op) =>
        h(
          "button",
          {
            type: "button",
            disabled: !live,
            "aria-label": `${op.verb} ${service}`,
            onclick: async () => {
              const title = `${op.verb[0]?.toUpperCase()}${op.verb.slice(1)} ${service}`;
              const body = op.verb === "restart" ? restartMode.value() : {};
              if (!body) return;
              const outcome = await runOperation(api, { title, endpoint: op.endpoint, params: { id: cluster.id, service }, body, destructive: op.destructive, providerType });
              if (outcome.done) changed();
            },
          },
          op.verb,
        ),
      ),
    ),
  );
  const toAdd = field({ name: "services", label: "Add services", hint: "Comma separated service names from the catalog." });
  const add = async (event: Event) => {
    event.preventDefault();
    const services = toAdd.value().split(",").map((s) => s.trim()).filter(Boolean);
    if (services.length === 0) return toAdd.showError("name at least one service");
    toAdd.showError(undefined);
    const outcome = await runOperation(api, { title: `Add ${services.join(", ")}`, endpoint: "clusters.addServices", params: { id: cluster.id }, body: { services }, providerType });
    if (outcome.done) changed();
  };
  return h(
    "div",
    { class: "services-tab" },
    live ? h("div", { class: "card restart-mode" }, restartMode.element) : null,
    h("ul", { class: "service-list" }, ...rows),
    live ? h("form", { class: "card", onsubmit: add }, toAdd.element, h("button", { type: "submit" }, "Add services")) : null,
  );
}
