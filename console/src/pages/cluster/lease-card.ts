/** The cluster's lease: when it ends, and a form to extend it (within the template's `max` and `step`; the server checks). */
import type { ClusterDetails } from "@corral/contracts";
import type { Api } from "../../api.js";
import { formatTime, h } from "../../components/dom.js";
import { clearErrors, field, formMessage, showServerError } from "../../components/form.js";

const HOUR_MS = 3_600_000;

export function leaseCard(api: Api, cluster: ClusterDetails, changed: () => void): HTMLElement {
  const step = cluster.clusterTemplate.administration?.leaseduration.step ?? 0;
  const hours = field({
    name: "expireTime",
    label: "Extend by (hours)",
    type: "number",
    value: String(step > 0 ? step / HOUR_MS : 24),
    hint: step > 0 ? `The template allows steps of up to ${step / HOUR_MS} hours.` : undefined,
  });
  const message = formMessage();
  const extend = async (event: Event) => {
    event.preventDefault();
    const from = Math.max(Date.now(), cluster.expireTime);
    try {
      await api.call("clusters.extendLease", { params: { id: cluster.id }, body: { expireTime: Math.round(from + Number(hours.value()) * HOUR_MS) } });
      clearErrors([hours], message);
      changed();
    } catch (err) {
      showServerError(err, [hours], message);
    }
  };
  const ends = cluster.expireTime ? formatTime(cluster.expireTime) : "never";
  return h(
    "div",
    { class: "lease" },
    h("p", null, "Lease ends: ", h("strong", { "data-testid": "lease-end" }, ends)),
    cluster.expireTime && cluster.status !== "terminated"
      ? h("form", { class: "inline-form", onsubmit: extend }, hours.element, message.element, h("button", { type: "submit" }, "Extend lease"))
      : null,
  );
}
