import type { NodeHealth } from "@corral/contracts";
import { formatTime, h } from "./dom.js";

/** A node's health as a coloured badge (`healthy`, `unreachable`, `missing`, `unknown`; `unchecked` when never reported); colours in style.css `.health-*`. */
export function healthBadge(health: NodeHealth | undefined): HTMLElement {
  const state = health?.state ?? "unchecked";
  const title = health ? `${health.message} (since ${formatTime(health.since)}, checked ${formatTime(health.checkedAt)})` : "No health check has reported this node.";
  return h("span", { class: `badge health-${state}`, title, dataset: { health: state } }, state);
}
