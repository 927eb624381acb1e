/** The cluster's config as JSON, editable; Configure dry-runs, then pushes it (and restarts services unless unchecked, all at once or rolling). */
import type { ClusterDetails, JsonObject } from "@corral/contracts";
import type { Api } from "../../api.js";
import { h } from "../../components/dom.js";
import { field } from "../../components/form.js";
import { runOperation } from "../../components/operation.js";
import { restartChoice } from "../../components/rolling-restart.js";

export function configTab(api: Api, cluster: ClusterDetails, changed: () => void): HTMLElement {
  const config = field({ name: "config", label: "Config (JSON)", type: "textarea", value: JSON.stringify(cluster.config, null, 2) });
  const restart = restartChoice("Restart services after configuring", true);
  const submit = async (event: Event) => {
    event.preventDefault();
    let parsed: JsonObject;
    try {
      parsed = JSON.parse(config.value()) as JsonObject;
    } catch (err) {
      return config.showError(`not valid JSON: ${(err as Error).message}`);
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return config.showError("the config must be a JSON object");
    config.showError(undefined);
    const restarting = restart.value();
    if (!restarting) return;
    const body = { config: parsed, ...restarting };
    const outcome = await runOperation(api, { title: "Configure", endpoint: "clusters.putConfig", params: { id: cluster.id }, body, providerType: cluster.provider.providertype });
    if (outcome.done) changed();
  };
  const live = cluster.status !== "terminated";
  return h("form", { class: "card config-tab", onsubmit: submit }, config.element, restart.element, h("button", { type: "submit", disabled: !live }, "Configure"));
}
